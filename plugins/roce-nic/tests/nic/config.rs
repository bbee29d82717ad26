//! The configuration's checks and the pools the NIC reports. That a traffic class needs a pool in
//! both buffer managers is checked by the application (`RdmaDataPacketTC`, in scala-rdma), against
//! the `NicPools` the NIC reports; here, that the NIC reports them right and refuses what it
//! cannot run.

use engine::prelude::*;
use models::nic::NicModel;
use models::nic::NicPools;
use roce_nic::RoceNicConfig;

fn err(c: &RoceNicConfig) -> String {
    c.validate().expect_err("the config should be refused").to_string()
}

#[test]
fn defaults_have_pools_for_classes_0_and_1_in_both_managers() {
    let c = RoceNicConfig::default();
    assert_eq!(c.validate(), Ok(()));
    let both = [true, true, false, false, false, false, false, false];
    assert_eq!(
        NicModel::pools(&c),
        NicPools {
            egress: both,
            ingress: both
        }
    );
    assert_eq!(NicModel::port_rate(&c), Some(Rate::gbps(400)));
    // Half of 4 MiB each.
    assert_eq!(c.EgressBufferManager.pools()[..2], [2 << 20, 2 << 20]);
}

#[test]
fn a_class_with_a_pool_on_one_side_only_is_reported_as_such() {
    // A transmit pool for class 3 and none to receive it: valid for the NIC (a host may only
    // send on it), but the application must refuse class 3, and the pools say why.
    let mut c = RoceNicConfig::default();
    c.EgressBufferManager.PoolAllocationVector = [0.5, 0.25, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(c.validate(), Ok(()));
    let pools = NicModel::pools(&c);
    assert!(pools.egress[3] && !pools.ingress[3]);
    // And the other way round.
    let mut c = RoceNicConfig::default();
    c.IngressBufferManager.PoolAllocationVector[0] = 0.0;
    c.IngressBufferManager.PoolAllocationVector[5] = 0.5;
    let pools = NicModel::pools(&c);
    assert!(pools.egress[0] && !pools.ingress[0]);
    assert!(!pools.egress[5] && pools.ingress[5]);
    // A share that rounds down to no byte at all is no pool: 1e-9 of 4 MiB is 0.004 B.
    let mut c = RoceNicConfig::default();
    c.EgressBufferManager.PoolAllocationVector[2] = 1e-9;
    assert!(!NicModel::pools(&c).egress[2]);
}

#[test]
fn bad_pool_allocation_vectors_are_refused_naming_the_field() {
    let mut c = RoceNicConfig::default();
    c.EgressBufferManager.PoolAllocationVector[7] = 1.5;
    assert!(
        err(&c).contains("EgressBufferManager.PoolAllocationVector[7]"),
        "{}",
        err(&c)
    );
    let mut c = RoceNicConfig::default();
    c.IngressBufferManager.PoolAllocationVector[2] = f64::NAN;
    assert!(
        err(&c).contains("IngressBufferManager.PoolAllocationVector[2]"),
        "{}",
        err(&c)
    );
    // 0.5 + 0.5 + 0.25 = 1.25 of the buffer.
    let mut c = RoceNicConfig::default();
    c.IngressBufferManager.PoolAllocationVector[4] = 0.25;
    assert!(err(&c).contains("adds up to 1.25"), "{}", err(&c));
    // A transmit pool must hold one packet's payload: 0.0005 x 4 MiB = 2,097 B < 4,096 B.
    let mut c = RoceNicConfig::default();
    c.EgressBufferManager.PoolAllocationVector[1] = 0.0005;
    let e = err(&c);
    assert!(e.contains("class 1") && e.contains("2097 B"), "{e}");
    // A receive pool must leave two frames (2 x 4,154 B) above XOFF: 0.003 x 4 MiB = 12,582 B,
    // half of it above XOFF, 6,291 B < 8,308 B.
    let mut c = RoceNicConfig::default();
    c.IngressBufferManager.PoolAllocationVector[1] = 0.003;
    let e = err(&c);
    assert!(e.contains("class 1") && e.contains("headroom"), "{e}");
}

#[test]
fn bad_pfc_thresholds_and_other_fields_are_refused() {
    let mut c = RoceNicConfig::default();
    c.IngressBufferManager.PfcXonFraction = 0.5; // equal to XOFF: no hysteresis
    assert!(err(&c).contains("PfcXonFraction < PfcXoffFraction"), "{}", err(&c));
    let mut c = RoceNicConfig::default();
    c.IngressBufferManager.PfcXoffFraction = 1.2;
    assert!(err(&c).contains("PfcXoffFraction"));
    let c = RoceNicConfig {
        Mss: Size(32),
        ..RoceNicConfig::default()
    };
    assert!(err(&c).contains("Mss"));
    let c = RoceNicConfig {
        FetchWindow: Size(1024),
        ..RoceNicConfig::default()
    };
    assert!(err(&c).contains("FetchWindow"));
    let c = RoceNicConfig {
        RetransmitTimeout: Duration(SimTime::ZERO),
        ..RoceNicConfig::default()
    };
    assert!(err(&c).contains("RetransmitTimeout"));
    let mut c = RoceNicConfig::default();
    c.Pcie.MaxPayloadSize = Size(0);
    assert!(err(&c).starts_with("Pcie.MaxPayloadSize"), "{}", err(&c));
}

#[test]
fn ron_fields_are_the_documented_names() {
    let c: RoceNicConfig = ron::from_str(
        "(PortRate: \"200Gbps\", EgressBufferManager: (PoolAllocationVector: [1, 0, 0, 0, 0, 0, 0, 0]), \
         IngressBufferManager: (BufferSize: \"8MiB\", PfcXoffFraction: 0.6), AckEveryPackets: 4, \
         Pcie: (Rate: \"256Gbps\"))",
    )
    .expect("valid RON");
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(c.PortRate, Rate::gbps(200));
    assert_eq!(
        NicModel::pools(&c).egress,
        [true, false, false, false, false, false, false, false]
    );
    assert_eq!(c.IngressBufferManager.as_buffer().pools()[1], 4 << 20);
    assert_eq!((c.AckEveryPackets, c.Pcie.Rate), (4, Rate::gbps(256)));
}
