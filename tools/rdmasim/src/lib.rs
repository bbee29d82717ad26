//! rdmasim library: scenario assembly and runs
