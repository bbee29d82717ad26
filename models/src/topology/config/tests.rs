//! RON forms of every variant, with defaults, overrides and the errors a typo gets.

use super::*;
use ron::extensions::Extensions;

/// The options the scenario loader uses (`engine::scenario::load::ron_options`).
fn opts() -> ron::Options {
    ron::Options::default().with_default_extension(Extensions::IMPLICIT_SOME)
}

fn parse(s: &str) -> TopologyConfig {
    opts().from_str(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn star_with_defaults() {
    let t = parse("Star(hosts: 10)");
    assert_eq!(
        t,
        TopologyConfig::Star(StarTopology {
            hosts: 10,
            link_rate: Rate::gbps(400),
            link_delay: Duration::from_us(1),
        })
    );
}

#[test]
fn star_with_rate_and_delay() {
    let t = parse(r#"Star(hosts: 3, link_rate: "100Gbps", link_delay: "500ns")"#);
    let TopologyConfig::Star(s) = t else { panic!("{t:?}") };
    assert_eq!(
        (s.hosts, s.link_rate, s.link_delay),
        (3, Rate::gbps(100), Duration::from_ns(500))
    );
}

#[test]
fn leaf_spine_defaults_and_overrides() {
    let t = parse("LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 4)");
    assert_eq!(t, TopologyConfig::default());
    let t = parse(
        r#"LeafSpine(leaves: 2, spines: 3, hosts_per_leaf: 5, link_rate: "200Gbps",
            host_link: (rate: "100Gbps"), spine_link: (delay: "2us"))"#,
    );
    let TopologyConfig::LeafSpine(ls) = t else {
        panic!("{t:?}")
    };
    assert_eq!((ls.leaves, ls.spines, ls.hosts_per_leaf), (2, 3, 5));
    let host = LinkOverride::resolve(ls.host_link.as_ref(), ls.link_rate, ls.link_delay);
    let spine = LinkOverride::resolve(ls.spine_link.as_ref(), ls.link_rate, ls.link_delay);
    assert_eq!(host, (Rate::gbps(100), Duration::from_us(1)));
    assert_eq!(spine, (Rate::gbps(200), Duration::from_us(2)));
}

#[test]
fn fat_tree_defaults_and_overrides() {
    let t = parse("FatTree(k: 4)");
    let TopologyConfig::FatTree(ft) = t else {
        panic!("{t:?}")
    };
    assert_eq!(ft.k, 4);
    assert_eq!((ft.link_rate, ft.link_delay), (Rate::gbps(400), Duration::from_us(1)));
    assert_eq!(
        (&ft.host_link, &ft.aggregation_link, &ft.core_link),
        (&None, &None, &None)
    );
    let t = parse(
        r#"FatTree(k: 8, link_delay: 2e-6, host_link: (rate: "100Gbps", delay: "100ns"),
            aggregation_link: (rate: "800Gbps"), core_link: (delay: "5us"))"#,
    );
    let TopologyConfig::FatTree(ft) = t else {
        panic!("{t:?}")
    };
    let r = |o: &Option<LinkOverride>| LinkOverride::resolve(o.as_ref(), ft.link_rate, ft.link_delay);
    assert_eq!(r(&ft.host_link), (Rate::gbps(100), Duration::from_ns(100)));
    assert_eq!(r(&ft.aggregation_link), (Rate::gbps(800), Duration::from_us(2)));
    assert_eq!(r(&ft.core_link), (Rate::gbps(400), Duration::from_us(5)));
}

#[test]
fn explicit_with_defaults_and_per_link_values() {
    let t = parse(
        r#"Explicit(
            nodes: [Host("h0"), Switch("s0"), Host("h1")],
            links: [(a: "h0", b: "s0"), (a: "s0", b: "h1", rate: "100Gbps", delay: "2us")],
            link_rate: "200Gbps",
        )"#,
    );
    let TopologyConfig::Explicit(e) = t else {
        panic!("{t:?}")
    };
    assert_eq!(
        e.nodes,
        vec![
            NodeSpec::Host("h0".into()),
            NodeSpec::Switch("s0".into()),
            NodeSpec::Host("h1".into())
        ]
    );
    assert_eq!((e.link_rate, e.link_delay), (Rate::gbps(200), Duration::from_us(1)));
    assert_eq!(
        e.links[0],
        LinkSpec {
            a: "h0".into(),
            b: "s0".into(),
            rate: None,
            delay: None
        }
    );
    assert_eq!(e.links[1].rate, Some(Rate::gbps(100)));
    assert_eq!(e.links[1].delay, Some(Duration::from_us(2)));
}

#[test]
fn as_a_field_of_a_scenario() {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Scenario {
        topology: TopologyConfig,
    }
    let s: Scenario = opts()
        .from_str("(topology: LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 4))")
        .unwrap();
    assert_eq!(s.topology, TopologyConfig::default());
    // The same with unwrap_variant_newtypes on too, here through the file's own pragma.
    let s: Scenario = ron::from_str(
        "#![enable(unwrap_variant_newtypes, implicit_some)]\n(topology: Star(hosts: 2, link_rate: \"1Gbps\"))",
    )
    .unwrap();
    assert!(matches!(
        s.topology,
        TopologyConfig::Star(StarTopology { hosts: 2, .. })
    ));
}

#[test]
fn plain_ron_needs_some_around_optional_fields() {
    let t: TopologyConfig =
        ron::from_str(r#"FatTree(k: 4, link_rate: "1Gbps", core_link: Some((delay: Some("2us"))))"#).unwrap();
    let TopologyConfig::FatTree(ft) = t else {
        panic!("{t:?}")
    };
    assert_eq!(ft.core_link.and_then(|c| c.delay), Some(Duration::from_us(2)));
    assert_eq!(ft.link_rate, Rate::gbps(1));
    // `Some(..)` is still accepted with implicit_some on.
    let t = parse(r#"FatTree(k: 4, core_link: Some((delay: Some("2us"))))"#);
    assert!(matches!(
        t,
        TopologyConfig::FatTree(FatTreeTopology { core_link: Some(_), .. })
    ));
    // The newtype form is not.
    assert!(opts().from_str::<TopologyConfig>("Star((hosts: 10))").is_err());
}

#[test]
fn field_lists_match_the_structs() {
    // ron names the accepted fields when one is unknown; those come from each struct's derive.
    let cases = [
        ("Explicit", variants::EXPLICIT_FIELDS),
        ("Star", variants::STAR_FIELDS),
        ("LeafSpine", variants::LEAF_SPINE_FIELDS),
        ("FatTree", variants::FAT_TREE_FIELDS),
    ];
    for (variant, fields) in cases {
        let err = opts()
            .from_str::<TopologyConfig>(&format!("{variant}(bogus: 1)"))
            .unwrap_err();
        let ron::Error::NoSuchStructField { expected, found, .. } = &err.code else {
            panic!("{err}")
        };
        assert_eq!((*expected, found.as_str()), (fields, "bogus"), "{variant}");
    }
}

#[test]
fn unknown_fields_and_variants_are_errors() {
    let err = opts()
        .from_str::<TopologyConfig>("Star(hosts: 4, hots: 1)")
        .unwrap_err();
    assert!(err.to_string().contains("hots"), "{err}");
    let err = opts()
        .from_str::<TopologyConfig>("FatTree(k: 4, core_link: (rate: \"1Gbps\", dealy: 1))")
        .unwrap_err();
    assert!(err.to_string().contains("dealy"), "{err}");
    let err = opts()
        .from_str::<TopologyConfig>(r#"Explicit(nodes: [], links: [(a: "x", b: "y", rte: 1)])"#)
        .unwrap_err();
    assert!(err.to_string().contains("rte"), "{err}");
    let err = opts().from_str::<TopologyConfig>("Ring(hosts: 4)").unwrap_err();
    assert!(
        err.to_string().contains("Ring") && err.to_string().contains("LeafSpine"),
        "{err}"
    );
    let err = opts().from_str::<TopologyConfig>("Star()").unwrap_err();
    assert!(err.to_string().contains("hosts"), "{err}");
    let err = opts().from_str::<TopologyConfig>("Star(hosts: \"many\")").unwrap_err();
    assert_eq!(err.span.start.line, 1);
}

#[test]
fn serializes_back_to_the_same_value() {
    let every_field = |delay: u64| LinkOverride {
        rate: Some(Rate::gbps(delay)),
        delay: Some(Duration::from_ns(delay)),
    };
    let configs = [
        TopologyConfig::default(),
        parse(r#"Star(hosts: 7, link_rate: "10Gbps", link_delay: "3us")"#),
        TopologyConfig::LeafSpine(LeafSpineTopology {
            leaves: 2,
            spines: 3,
            hosts_per_leaf: 5,
            link_rate: Rate::gbps(7),
            link_delay: Duration::from_ns(70),
            host_link: Some(every_field(1)),
            spine_link: Some(every_field(2)),
        }),
        TopologyConfig::FatTree(FatTreeTopology {
            k: 6,
            link_rate: Rate::gbps(9),
            link_delay: Duration::from_ns(90),
            host_link: Some(every_field(3)),
            aggregation_link: Some(every_field(4)),
            core_link: Some(every_field(5)),
        }),
        parse(r#"FatTree(k: 6, host_link: (rate: "100Gbps"))"#),
        parse(
            r#"Explicit(nodes: [Host("a"), Host("b")], links: [(a: "a", b: "b", rate: 5, delay: "3us")],
                link_rate: "1Gbps", link_delay: "2ns")"#,
        ),
    ];
    for c in configs {
        for options in [opts(), ron::Options::default()] {
            let text = options.to_string(&c).unwrap();
            assert_eq!(options.from_str::<TopologyConfig>(&text).unwrap(), c, "{text}");
        }
    }
    let text = opts().to_string(&TopologyConfig::default()).unwrap();
    assert_eq!(
        text,
        r#"LeafSpine(leaves:4,spines:4,hosts_per_leaf:4,link_rate:"400Gbps",link_delay:"1000000ps")"#
    );
}
