mod export;
mod export_buffers;

#[allow(unused_imports)]
use super::*;
mod realparse;
