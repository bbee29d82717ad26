//! rdmasim-scala-rdma
