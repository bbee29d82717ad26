//! Workspace integration tests, one binary.
