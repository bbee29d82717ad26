//! rdmasim-ideal-nic
