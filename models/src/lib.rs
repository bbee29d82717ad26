//! rdmasim-models
