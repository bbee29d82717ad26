//! Every checked field, given a bad value two ways: written in the file, the error names that
//! field at its own line (not the enclosing struct's); given by `--set` on a good file, it is
//! shown in the `--set` argument, the caret on the value. One table covers deserialization
//! checks (ranges, units) and the checks that need more than one field alike.

use engine::scenario::{ScenarioError, apply_override};
use rdmasim::scenario::load_text;

/// A scenario with every field the table touches written out, one per line.
const BASE: &str = r#"(
    name: "fields",
    simulation: (
        StartTime: 0.001,
        RunTime: 0.001,
        BeaconReportInterval: 0.0001,
    ),
    topology: Star(
        hosts: 4,
        link_rate: "400Gbps",
    ),
    nic: RoceNic((
        PortRate: "400Gbps",
        Mss: "4KiB",
        HeaderBytes: 58,
        EgressBufferManager: (
            BufferSize: "4MiB",
            PoolAllocationVector: [0.5, 0.5, 0, 0, 0, 0, 0, 0],
        ),
        IngressBufferManager: (
            BufferSize: "4MiB",
            PfcXoffFraction: 0.5,
            PfcXonFraction: 0.25,
        ),
        FetchWindow: "64KiB",
        TxBurstPackets: 4,
        RetransmitTimeout: "67ms",
        Pcie: (
            Rate: "504Gbps",
            MaxPayloadSize: 256,
            MaxReadRequestSize: 512,
            TlpOverheadBytes: 24,
        ),
    )),
    switch: (
        BufferSize: "32MiB",
        PfcXoff: "256KiB",
        PfcXon: "224KiB",
        LossyQueueLimit: "1MiB",
        Scheduler: StrictPriority,
        Ecn: (
            Kmin: "100KiB",
            Kmax: "400KiB",
            Pmax: 0.2,
        ),
    ),
    applications: [ScalaRdma((
        prScalaRdmaInitiator: 0.5,
        NumConnections: 1,
        MaxPendingWQEs: 10,
        DoorbellPayloadSize: 64,
        RdmaDataPacketTC: 0,
    ))],
    watchdog: (
        StallTimeout: 0.2,
    ),
    faults: [
        Loss(link: ("h0", "s0"), rate: 0.0),
    ],
    telemetry: (
        Interval: "10us",
    ),
    partition: [["s0"]],
)
"#;

/// (the `--set` assignment, the field the error must name, the line text that holds it in
/// BASE, words the message must have).
#[rustfmt::skip]
const CASES: &[(&str, &str, &str, &str)] = &[
    ("simulation.RunTime=-1", "simulation.RunTime", "RunTime:", "negative"),
    ("simulation.StartTime=\"3parsec\"", "simulation.StartTime", "StartTime:", "not a duration"),
    ("simulation.BeaconReportInterval=0", "simulation.BeaconReportInterval", "BeaconReportInterval:", "greater than 0"),
    ("topology.hosts=1", "topology.hosts", "hosts:", "at least 2"),
    ("topology.link_rate=\"100Gbps\"", "nic.PortRate", "PortRate:", "linked at"),
    ("nic.PortRate=\"100Gbps\"", "nic.PortRate", "PortRate:", "linked at"),
    ("nic.Mss=32", "nic.Mss", "Mss:", "64 B to 9000 B"),
    ("nic.HeaderBytes=300", "nic.HeaderBytes", "HeaderBytes:", "at most 256 B"),
    ("nic.EgressBufferManager.BufferSize=0", "nic.EgressBufferManager.BufferSize", "BufferSize: \"4MiB\",\n            Pool", "more than 0 B"),
    ("nic.EgressBufferManager.BufferSize=\"6KiB\"", "nic.EgressBufferManager.PoolAllocationVector[0]", "PoolAllocationVector:", "one packet's payload"),
    ("nic.EgressBufferManager.PoolAllocationVector=[1.5, 0, 0, 0, 0, 0, 0, 0]", "nic.EgressBufferManager.PoolAllocationVector[0]", "PoolAllocationVector:", "from 0 to 1"),
    ("nic.EgressBufferManager.PoolAllocationVector=[0.7, 0.7, 0, 0, 0, 0, 0, 0]", "nic.EgressBufferManager.PoolAllocationVector", "PoolAllocationVector:", "adds up to 1.4"),
    ("nic.EgressBufferManager.PoolAllocationVector=[0.5, 0.5, 1e-9, 0, 0, 0, 0, 0]", "nic.EgressBufferManager.PoolAllocationVector[2]", "PoolAllocationVector:", "0 B"),
    ("nic.IngressBufferManager.BufferSize=0", "nic.IngressBufferManager.BufferSize", "BufferSize: \"4MiB\",\n            PfcXoff", "more than 0 B"),
    ("nic.IngressBufferManager.BufferSize=\"16KiB\"", "nic.IngressBufferManager.PoolAllocationVector[0]", "IngressBufferManager:", "headroom"),
    ("nic.IngressBufferManager.PfcXoffFraction=1.2", "nic.IngressBufferManager.PfcXoffFraction", "PfcXoffFraction:", "from 0 to 1"),
    ("nic.IngressBufferManager.PfcXonFraction=0.5", "nic.IngressBufferManager.PfcXonFraction", "PfcXonFraction:", "PfcXonFraction < PfcXoffFraction"),
    ("nic.FetchWindow=1024", "nic.FetchWindow", "FetchWindow:", "one Mss"),
    ("nic.TxBurstPackets=0", "nic.TxBurstPackets", "TxBurstPackets:", "1 to 64"),
    ("nic.RetransmitTimeout=0", "nic.RetransmitTimeout", "RetransmitTimeout:", "greater than 0"),
    ("nic.Pcie.MaxPayloadSize=0", "nic.Pcie.MaxPayloadSize", "MaxPayloadSize:", "1 B to 4096 B"),
    ("nic.Pcie.MaxReadRequestSize=8192", "nic.Pcie.MaxReadRequestSize", "MaxReadRequestSize:", "1 B to 4096 B"),
    ("nic.Pcie.TlpOverheadBytes=18446744073709551616", "nic.Pcie.TlpOverheadBytes", "TlpOverheadBytes:", ""),
    ("switch.BufferSize=0", "switch.BufferSize", "BufferSize: \"32MiB\"", "more than 0 B"),
    ("switch.BufferSize=\"1MiB\"", "switch.BufferSize", "BufferSize: \"32MiB\"", "lossless reservation"),
    ("switch.PfcXoff=0", "switch.PfcXoff", "PfcXoff: \"256KiB\"", "more than 0 B"),
    ("switch.PfcXon=\"256KiB\"", "switch.PfcXon", "PfcXon: \"224KiB\"", "below PfcXoff"),
    ("switch.LossyQueueLimit=0", "switch.LossyQueueLimit", "LossyQueueLimit:", "more than 0 B"),
    ("switch.Scheduler=Dwrr(weights: [1, 0, 1, 1, 1, 1, 1, 1])", "switch.Scheduler.weights[1]", "Scheduler:", "at least 1"),
    ("switch.Ecn.Kmin=\"1MiB\"", "switch.Ecn.Kmin", "Kmin:", "Ecn.Kmax"),
    ("switch.Ecn.Pmax=1.5", "switch.Ecn.Pmax", "Pmax:", "probability"),
    ("applications[0].prScalaRdmaInitiator=0", "applications[0].prScalaRdmaInitiator", "prScalaRdmaInitiator:", ""),
    ("applications[0].NumConnections=0", "applications[0].NumConnections", "NumConnections:", "1 to 1,024"),
    ("applications[0].MaxPendingWQEs=40000", "applications[0].MaxPendingWQEs", "MaxPendingWQEs:", "32,768"),
    ("applications[0].DoorbellPayloadSize=\"1MiB\"", "applications[0].DoorbellPayloadSize", "DoorbellPayloadSize:", ""),
    ("applications[0].RdmaDataPacketTC=3", "applications[0].RdmaDataPacketTC", "RdmaDataPacketTC:", "no egress pool"),
    ("watchdog.StallTimeout=0", "watchdog.StallTimeout", "StallTimeout:", "greater than 0"),
    ("faults[0].rate=1.5", "faults[0].rate", "rate: 0.0", "probability"),
    ("telemetry.Interval=0", "telemetry.Interval", "Interval: \"10us\"", "greater than 0"),
    ("partition[0][0]=\"s9\"", "partition[0][0]", "partition:", "no node of the topology is named `s9`"),
    ("partition[0][0]=\"h1\"", "partition[0][0]", "partition:", "hosts go with their first switch"),
];

/// The 1-based line of BASE where `needle` starts.
fn line_of(needle: &str) -> usize {
    let at = BASE.find(needle).unwrap_or_else(|| panic!("{needle:?} not in BASE"));
    BASE[..at].matches('\n').count() + 1
}

#[test]
fn the_base_scenario_is_valid() {
    load_text("fields.ron", BASE, &[]).unwrap_or_else(|e| panic!("{e}"));
}

/// Runs `case` on every row and fails with every row that failed, not just the first.
fn every_case(case: impl Fn(&str, &str, &str, &str) -> Result<(), String>) {
    let failed: Vec<String> = CASES
        .iter()
        .filter_map(|&(set, field, anchor, says)| case(set, field, anchor, says).err())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases:\n{}",
        failed.len(),
        CASES.len(),
        failed.join("\n")
    );
}

fn expect(ok: bool, what: &str, set: &str, first: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{set}: {what}: {first}"))
    }
}

/// The error names `field` and says `says`.
fn names(e: &ScenarioError, set: &str, field: &str, says: &str) -> Result<(), String> {
    let first = e.to_string();
    expect(
        e.field.as_deref() == Some(field),
        &format!("not at {field}"),
        set,
        &first,
    )?;
    expect(first.contains(says), &format!("no {says:?}"), set, &first)
}

#[test]
fn a_bad_value_in_the_file_is_shown_at_its_own_field_and_line() {
    every_case(|set, field, anchor, says| {
        let text = apply_override(BASE, set).map_err(|e| format!("{set}: {e}"))?;
        let Err(e) = load_text("fields.ron", &text, &[]) else {
            return Err(format!("{set}: accepted"));
        };
        let first = e.to_string();
        expect(e.file == "fields.ron", "not in the file", set, &first)?;
        names(&e, set, field, says)?;
        expect(
            e.line == line_of(anchor),
            &format!("not at line {}", line_of(anchor)),
            set,
            &first,
        )?;
        let message = first.split_once(&format!(": {field}: ")).map_or("", |(_, m)| m);
        expect(!message.starts_with(field), "the field named twice", set, &first)
    });
}

#[test]
fn a_bad_value_given_by_set_is_shown_in_that_argument() {
    every_case(|set, field, _, says| {
        let Err(e) = load_text("fields.ron", BASE, &["simulation.RandomSeed=7".into(), set.into()]) else {
            return Err(format!("{set}: accepted"));
        };
        let first = e.to_string();
        expect(e.file == "<--set>" && e.line == 1, "not in the argument", set, &first)?;
        let value_column = set.find('=').expect("PATH=VALUE") + 2;
        expect(e.column >= value_column, "the caret is not on the value", set, &first)?;
        names(&e, set, field, says)
    });
}
