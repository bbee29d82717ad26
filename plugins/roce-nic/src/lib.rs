//! rdmasim-roce-nic
