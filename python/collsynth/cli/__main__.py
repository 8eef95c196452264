from collsynth.cli import entry

entry()
