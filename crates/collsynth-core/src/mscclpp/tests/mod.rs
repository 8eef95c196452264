mod export;
mod mutation;
mod pairing;
mod real;
