//! Tests of `config`: RON names, defaults, and one error per bad value with its position.

use super::*;

/// With the scenario loader's options (`implicit_some`: an optional ratio is a bare number).
fn parse(ron_text: &str) -> Result<ScalaRdmaConfig, ron::error::SpannedError> {
    engine::scenario::ron_options().from_str(ron_text)
}

/// Parses a config whose line 2 is `field`, expects an error, and checks that it names
/// `mentions` and points at line 2.
fn bad(field: &str, mentions: &[&str]) -> String {
    let text = format!("(\n    {field},\n)");
    let err = parse(&text).expect_err(&text);
    let shown = err.to_string();
    assert_eq!(err.span.start.line, 2, "{shown}");
    assert!(
        shown.starts_with("2:"),
        "Display should start with line:column, got {shown}"
    );
    for m in mentions {
        assert!(shown.contains(m), "`{field}`: `{shown}` should mention `{m}`");
    }
    shown
}

#[test]
fn every_field_parses_under_its_spec_name() {
    let cfg = parse(
        r#"(
            name: "rdma-a",
            prScalaRdmaInitiator: 0.25,
            prScalaRdmaResponder: 0.75,
            NumConnections: 4,
            MaxPendingWQEs: 0,
            StartType: sequential,
            DoorbellPayloadSize: "128B",
            OpCode: RDMA_OPCODE_WRITE_FIRST,
            RdmaVerb: RDMA_VERB_POST_WRITE,
            RdmaDataPacketTC: 1,
        )"#,
    )
    .unwrap();
    assert_eq!(cfg.name, "rdma-a");
    assert_eq!(cfg.pr_scala_rdma_initiator.unwrap().get(), 0.25);
    assert_eq!(cfg.pr_scala_rdma_responder.unwrap().get(), 0.75);
    assert_eq!(cfg.num_connections.get(), 4);
    assert_eq!(cfg.max_pending_wqes.get(), 0);
    assert_eq!(cfg.start_type, StartType::Sequential);
    assert_eq!(cfg.doorbell_payload_size.get(), Size(128));
    assert_eq!(cfg.op_code, OpCode::WriteFirst);
    assert_eq!(cfg.rdma_verb, RdmaVerb::PostWrite);
    assert_eq!(cfg.rdma_data_packet_tc.get(), 1);
    // 128 B of payload + 28 B of UDP/IPv4 headers.
    assert_eq!(cfg.doorbell_bytes(), 156);
}

#[test]
fn start_types_and_number_forms() {
    for (text, want) in [
        ("simultaneous", StartType::Simultaneous),
        ("uniform", StartType::Uniform),
        ("sequential", StartType::Sequential),
    ] {
        let cfg = parse(&format!("(StartType: {text})")).unwrap();
        assert_eq!(cfg.start_type, want);
    }
    // A ratio written as an integer, a size as a bare number of bytes.
    let cfg = parse("(prScalaRdmaInitiator: 1, DoorbellPayloadSize: 4096, NumConnections: 1024)").unwrap();
    assert_eq!(cfg.pr_scala_rdma_initiator.unwrap().get(), 1.0);
    assert_eq!(cfg.doorbell_payload_size.get(), Size(4096));
    assert_eq!(cfg.num_connections.get(), 1024);
    // 32,768: the deepest send queue a ConnectX-5/6/7 accepts (max_qp_wr), the bound itself.
    let cfg = parse("(MaxPendingWQEs: 32768, RdmaDataPacketTC: 7)").unwrap();
    assert_eq!(cfg.max_pending_wqes.get(), 32_768);
    assert_eq!(cfg.rdma_data_packet_tc.get(), 7);
}

#[test]
fn omitted_fields_take_the_spec_defaults() {
    let cfg = parse("()").unwrap();
    assert_eq!(cfg, ScalaRdmaConfig::default());
    assert_eq!(cfg.name, "scala-rdma");
    // Left out: the loader splits 1.0 evenly over every entry left out (0.5 each on its own).
    assert_eq!(cfg.pr_scala_rdma_initiator, None);
    assert_eq!(cfg.pr_scala_rdma_responder, None);
    assert_eq!(cfg.num_connections.get(), 1);
    assert_eq!(cfg.max_pending_wqes.get(), 10);
    assert_eq!(cfg.start_type, StartType::Simultaneous);
    assert_eq!(cfg.doorbell_payload_size.get(), Size(64));
    assert_eq!(cfg.rdma_data_packet_tc.get(), 0);
    // The spec's doorbell: 64 + 28 = 92 bytes over PCIe.
    assert_eq!(cfg.doorbell_bytes(), 92);
    assert_eq!(TRANSFER_SIZE_BYTES, 250_000);
    // One field given, the others still default.
    let cfg = parse("(NumConnections: 8)").unwrap();
    assert_eq!(cfg.num_connections.get(), 8);
    assert_eq!(cfg.max_pending_wqes.get(), ScalaRdmaConfig::DEFAULT_MAX_PENDING_WQES);
}

#[test]
fn serializes_back_to_the_same_config() {
    let cfg = parse("(NumConnections: 3, StartType: uniform, DoorbellPayloadSize: \"1KiB\")").unwrap();
    let text = ron::to_string(&cfg).unwrap();
    assert!(text.contains("NumConnections:3"), "{text}");
    assert!(text.contains("RdmaDataPacketTC:0"), "{text}");
    assert_eq!(parse(&text).unwrap(), cfg);
}

#[test]
fn unknown_fields_are_rejected_with_their_position() {
    let shown = bad("NumConnection: 2", &["NumConnection", "NumConnections"]);
    assert!(shown.contains("Unexpected field"), "{shown}");
}

#[test]
fn ratios_must_be_above_zero_and_at_most_one() {
    bad(
        "prScalaRdmaInitiator: 0",
        &["prScalaRdmaInitiator", "a ratio of 0", "got 0"],
    );
    bad("prScalaRdmaInitiator: 0.0", &["prScalaRdmaInitiator", "above 0"]);
    bad("prScalaRdmaResponder: -0.5", &["prScalaRdmaResponder", "got -0.5"]);
    bad(
        "prScalaRdmaResponder: 1.5",
        &["prScalaRdmaResponder", "at most 1", "got 1.5"],
    );
    bad("prScalaRdmaInitiator: NaN", &["prScalaRdmaInitiator", "got NaN"]);
    bad("prScalaRdmaInitiator: \"half\"", &["prScalaRdmaInitiator", "half"]);
}

#[test]
fn num_connections_range() {
    bad(
        "NumConnections: 2000",
        &["NumConnections must be from 1 to 1,024, got 2000"],
    );
    bad("NumConnections: 0", &["NumConnections must be from 1 to 1,024, got 0"]);
    bad("NumConnections: -1", &["NumConnections", "got -1"]);
    bad("NumConnections: 2.5", &["NumConnections", "not a whole number"]);
    bad("NumConnections: \"ten\"", &["NumConnections", "ten"]);
    bad(
        "NumConnections: 99999999999999",
        &["NumConnections", "got 99999999999999"],
    );
}

#[test]
fn max_pending_wqes_range() {
    bad(
        "MaxPendingWQEs: 32769",
        &["MaxPendingWQEs must be from 0 to 32,768", "max_qp_wr", "got 32769"],
    );
    bad("MaxPendingWQEs: -3", &["MaxPendingWQEs", "got -3"]);
}

#[test]
fn traffic_class_range() {
    bad("RdmaDataPacketTC: 8", &["RdmaDataPacketTC must be from 0 to 7, got 8"]);
    bad("RdmaDataPacketTC: 300", &["RdmaDataPacketTC", "got 300"]);
}

#[test]
fn doorbell_payload_size_range() {
    bad(
        "DoorbellPayloadSize: 0",
        &["DoorbellPayloadSize must be from 1 B to 4,096 B, got 0 B"],
    );
    bad("DoorbellPayloadSize: \"8KiB\"", &["DoorbellPayloadSize", "got 8192 B"]);
    bad(
        "DoorbellPayloadSize: \"64 furlongs\"",
        &["DoorbellPayloadSize", "not a size"],
    );
}

#[test]
fn enums_accept_only_their_values() {
    bad("OpCode: RDMA_OPCODE_READ", &["OpCode", "RDMA_OPCODE_WRITE_FIRST"]);
    bad("RdmaVerb: RDMA_VERB_POST_READ", &["RdmaVerb", "RDMA_VERB_POST_WRITE"]);
    bad(
        "StartType: staggered",
        &["StartType", "simultaneous", "uniform", "sequential"],
    );
}

#[test]
fn name_must_be_plain() {
    bad("name: \"\"", &["name must be non-empty"]);
    bad("name: \"a,b\"", &["name", "\"a,b\""]);
}

#[test]
fn instance_names_are_per_connection() {
    let cfg = ScalaRdmaConfig::default();
    assert_eq!(cfg.instance_name(3, 12, 0), "scala-rdma-initiator-3-12-0");
    assert_ne!(cfg.instance_name(3, 12, 0), cfg.instance_name(3, 12, 1));
}

#[test]
fn constructors_check_like_the_deserializers() {
    assert!(NumConnections::new(1).is_ok());
    assert_eq!(
        NumConnections::new(2000).unwrap_err().to_string(),
        "NumConnections must be from 1 to 1,024, got 2000"
    );
    assert!(TrafficClass::new(8).is_err());
    assert!(InitiatorRatio::new(f64::NAN).is_err());
    assert!(DoorbellPayloadSize::new(Size(4097)).is_err());
}

#[test]
fn traffic_class_needs_both_pools() {
    // The NIC's defaults: pools for classes 0 and 1 in both buffers.
    let mut defaults = [false; 8];
    defaults[0] = true;
    defaults[1] = true;
    let with_tc = |tc: u8| ScalaRdmaConfig {
        rdma_data_packet_tc: TrafficClass::new(tc).unwrap(),
        ..ScalaRdmaConfig::default()
    };
    assert_eq!(with_tc(0).validate_against_pools(&defaults, &defaults), Ok(()));
    assert_eq!(with_tc(1).validate_against_pools(&defaults, &defaults), Ok(()));

    let err = with_tc(3).validate_against_pools(&defaults, &defaults).unwrap_err();
    assert!(matches!(
        err,
        ConfigError::NoPoolForTrafficClass {
            tc: 3,
            missing: MissingPool::Both,
            ..
        }
    ));
    let shown = err.to_string();
    assert!(shown.contains("RdmaDataPacketTC 3"), "{shown}");
    assert!(shown.contains("classes 0, 1 have both"), "{shown}");

    let mut egress = defaults;
    egress[3] = true;
    let err = with_tc(3).validate_against_pools(&egress, &defaults).unwrap_err();
    assert!(matches!(
        err,
        ConfigError::NoPoolForTrafficClass {
            missing: MissingPool::Ingress,
            ..
        }
    ));
    assert!(
        err.to_string()
            .contains("ingress (receive) pool on the Responder's NIC"),
        "{err}"
    );

    let err = with_tc(3).validate_against_pools(&defaults, &egress).unwrap_err();
    assert!(matches!(
        err,
        ConfigError::NoPoolForTrafficClass {
            missing: MissingPool::Egress,
            ..
        }
    ));
    assert!(
        err.to_string()
            .contains("egress (transmit) pool on the Initiator's NIC"),
        "{err}"
    );
}
