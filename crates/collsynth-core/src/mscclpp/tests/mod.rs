mod export;
mod mutation;
mod real;
