//! `rdmasim serve` end to end: real server processes on ephemeral loopback ports, a real HTTP
//! client, real (short) simulations. One binary, a module per concern.

#[path = "../common/mod.rs"]
mod common;
mod robustness;
mod security;
mod server;
mod whole_path;
