//! The scenario reference (`scenarios/README.md`) checked against the code, so the two cannot
//! drift. Every config type's fields are read from its `Deserialize` impl (`shape`), and each must
//! have a row in that type's table, and each row a field; a row's default, written as the RON a
//! scenario would use, must give exactly the type's default when loaded; its source must say
//! `spec` or `ours`. The output columns are read from a real (short) run's files and compared
//! with their tables in order; every scenario file must be listed and load; every RON example
//! must load as a scenario, every `--set` example must apply to `default.ron`, and every source
//! file the references name must exist.
//!
//! A table belongs to the first heading that names its Rust type in backticks (`` `SwitchConfig` ``)
//! and is the first table under it, with the columns Field, Unit, Default, Range / check, Source,
//! Meaning. A Default cell is `required` or one RON value in backticks.

mod doc;
mod shape;

use doc::{Doc, code};
use serde::de::DeserializeOwned;
use shape::shape;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
}

/// RON text into `T` with the scenario loader's options, shown as its `Debug` form (which every
/// config type has, and which, unlike `PartialEq`, the `Scenario` type has too).
fn load_debug<T: DeserializeOwned + Debug>(text: &str) -> Result<String, String> {
    engine::scenario::ron_options()
        .from_str::<T>(text)
        .map(|v| format!("{v:?}"))
        .map_err(|e| e.to_string())
}

/// A RON struct of `fields`, e.g. `(hosts: 16, link_rate: "100Gbps")`.
fn ron_struct(fields: &[(&str, &str)]) -> String {
    let inner: Vec<String> = fields.iter().map(|(f, v)| format!("{f}: {v}")).collect();
    format!("({})", inner.join(", "))
}

/// Checks the table of type `T` (found by `marker`) against `T`'s fields and defaults. `base`
/// holds `T`'s required fields with a value each, and nothing else.
fn check_table<T: DeserializeOwned + Debug>(doc: &Doc, marker: &str, base: &[(&str, &str)]) -> Vec<String> {
    let fields = shape::<T>().fields(marker);
    let mut problems = Vec::new();
    let mut documented = BTreeSet::new();
    let baseline = load_debug::<T>(&ron_struct(base))
        .unwrap_or_else(|e| panic!("{marker}: the base {} does not load: {e}", ron_struct(base)));
    for row in doc.table(marker) {
        let [name, unit, default, range, source, meaning] = row.as_slice() else {
            problems.push(format!("{marker}: row {row:?} does not have the six columns"));
            continue;
        };
        let Some(name) = code(name) else {
            problems.push(format!("{marker}: the first cell of {row:?} is not a `Field`"));
            continue;
        };
        documented.insert(name.to_string());
        if !fields.contains(&name) {
            problems.push(format!(
                "{marker}: `{name}` is documented but is not a field of the type"
            ));
            continue;
        }
        if [unit, range, meaning].iter().any(|c| c.is_empty()) {
            problems.push(format!(
                "{marker}.{name}: the unit, range and meaning must be filled in"
            ));
        }
        if !(source.starts_with("spec") || source.starts_with("ours")) {
            problems.push(format!("{marker}.{name}: the source is `{source}`, not spec or ours"));
        }
        let others: Vec<(&str, &str)> = base.iter().copied().filter(|(f, _)| *f != name).collect();
        let required = others.len() < base.len();
        if default == "required" {
            if !required {
                problems.push(format!(
                    "{marker}.{name}: documented as required; add it to this test's base if it is"
                ));
            } else if load_debug::<T>(&ron_struct(&others)).is_ok() {
                problems.push(format!("{marker}.{name}: documented as required, but loads without it"));
            }
            continue;
        }
        if required {
            problems.push(format!(
                "{marker}.{name}: required (this test's base), but documented with a default"
            ));
            continue;
        }
        let Some(value) = code(default) else {
            problems.push(format!(
                "{marker}.{name}: the default {default} is neither `required` nor one RON value in backticks"
            ));
            continue;
        };
        let mut with = base.to_vec();
        with.push((name, value));
        match load_debug::<T>(&ron_struct(&with)) {
            Ok(got) if got == baseline => {}
            Ok(got) => problems.push(format!(
                "{marker}.{name}: the documented default {value} loads as\n  {got}\nbut the code's default is\n  {baseline}"
            )),
            Err(e) => problems.push(format!("{marker}.{name}: the documented default {value} does not load: {e}")),
        }
    }
    for f in fields {
        if !documented.contains(*f) {
            problems.push(format!("{marker}: the field `{f}` has no row in {}", doc.name));
        }
    }
    problems
}

/// The scenario files, relative to `scenarios/`: the top folder's and `cc/`'s.
fn scenario_files() -> Vec<String> {
    let mut names = Vec::new();
    for dir in ["", "cc/"] {
        let mut here: Vec<String> = std::fs::read_dir(root().join("scenarios").join(dir))
            .expect("the scenario folder exists")
            .filter_map(|e| e.ok())
            .map(|e| format!("{dir}{}", e.file_name().to_string_lossy()))
            .filter(|n| n.ends_with(".ron"))
            .collect();
        here.sort();
        names.extend(here);
    }
    names
}

fn assert_none(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "the reference and the code disagree:\n- {}",
        problems.join("\n- ")
    );
}

#[test]
fn every_config_field_has_a_checked_row() {
    use models::fabric::switch_config::{EcnConfig, SwitchConfig};
    use models::topology::*;
    use roce_nic::config::{BufferManager, IngressBufferManager, RoceNicConfig};
    rdmasim::scenario::register_builtins();
    let doc = Doc::load("scenarios/README.md");
    let mut p = Vec::new();
    let scenario = [
        ("name", r#""reference""#),
        ("nic", "RoceNic(())"),
        ("applications", "[]"),
    ];
    p.extend(check_table::<rdmasim::scenario::Scenario>(
        &doc,
        "`Scenario`",
        &scenario,
    ));
    p.extend(check_table::<engine::params::SimulationParameters>(
        &doc,
        "`SimulationParameters`",
        &[],
    ));
    p.extend(check_table::<ExplicitTopology>(
        &doc,
        "`ExplicitTopology`",
        &[("nodes", "[]"), ("links", "[]")],
    ));
    p.extend(check_table::<LinkSpec>(
        &doc,
        "`LinkSpec`",
        &[("a", r#""h0""#), ("b", r#""s0""#)],
    ));
    p.extend(check_table::<StarTopology>(&doc, "`StarTopology`", &[("hosts", "16")]));
    p.extend(check_table::<LeafSpineTopology>(
        &doc,
        "`LeafSpineTopology`",
        &[("leaves", "4"), ("spines", "4"), ("hosts_per_leaf", "4")],
    ));
    p.extend(check_table::<FatTreeTopology>(&doc, "`FatTreeTopology`", &[("k", "4")]));
    p.extend(check_table::<LinkOverride>(&doc, "`LinkOverride`", &[]));
    p.extend(check_table::<SwitchConfig>(&doc, "`SwitchConfig`", &[]));
    p.extend(check_table::<EcnConfig>(&doc, "`EcnConfig`", &[]));
    p.extend(check_table::<oq_switch::OqSwitchConfig>(&doc, "`OqSwitchConfig`", &[]));
    p.extend(check_table::<RoceNicConfig>(&doc, "`RoceNicConfig`", &[]));
    p.extend(check_table::<dcqcn::DcqcnConfig>(&doc, "`DcqcnConfig`", &[]));
    p.extend(check_table::<hpcc::HpccConfig>(&doc, "`HpccConfig`", &[]));
    p.extend(check_table::<BufferManager>(&doc, "`BufferManager`", &[]));
    p.extend(check_table::<IngressBufferManager>(&doc, "`IngressBufferManager`", &[]));
    p.extend(check_table::<models::pcie::PcieConfig>(&doc, "`PcieConfig`", &[]));
    p.extend(check_table::<ideal_nic::IdealNicConfig>(&doc, "`IdealNicConfig`", &[]));
    p.extend(check_table::<models::watchdog::WatchdogConfig>(
        &doc,
        "`WatchdogConfig`",
        &[],
    ));
    p.extend(check_table::<scala_rdma::ScalaRdmaConfig>(
        &doc,
        "`ScalaRdmaConfig`",
        &[],
    ));
    p.extend(check_table::<flows::FlowsConfig>(&doc, "`FlowsConfig`", &[]));
    p.extend(check_table::<models::telemetry::TelemetryConfig>(
        &doc,
        "`TelemetryConfig`",
        &[],
    ));
    p.extend(check_table::<flows::FlowSpec>(
        &doc,
        "`FlowSpec`",
        &[("src", "0"), ("dst", "1"), ("bytes", "1")],
    ));

    // The topology variants read the same fields as the structs whose tables were checked.
    let topology = shape::<TopologyConfig>();
    for (variant, fields) in [
        ("Explicit", shape::<ExplicitTopology>().fields("ExplicitTopology")),
        ("Star", shape::<StarTopology>().fields("StarTopology")),
        ("LeafSpine", shape::<LeafSpineTopology>().fields("LeafSpineTopology")),
        ("FatTree", shape::<FatTreeTopology>().fields("FatTreeTopology")),
    ] {
        if topology.variant_fields(variant) != fields {
            p.push(format!(
                "topology variant {variant} reads {:?}, its struct {fields:?}",
                topology.variant_fields(variant)
            ));
        }
    }
    // Every name a scenario can write in place of a value.
    let mut names: Vec<&str> = topology.variant_names("TopologyConfig");
    names.extend(shape::<NodeSpec>().variant_names("NodeSpec"));
    let scheduler = shape::<models::fabric::switch_config::Scheduler>();
    names.extend(scheduler.variant_names("Scheduler"));
    names.extend(scheduler.variant_fields("Dwrr"));
    names.extend(shape::<scala_rdma::config::StartType>().variant_names("StartType"));
    names.extend(shape::<scala_rdma::config::OpCode>().variant_names("OpCode"));
    names.extend(shape::<scala_rdma::config::RdmaVerb>().variant_names("RdmaVerb"));
    for (registry, name) in [
        (models::registry::NICS.names(), "RoceNic"),
        (models::registry::NICS.names(), "IdealNic"),
        (models::registry::APPLICATIONS.names(), "ScalaRdma"),
        (models::registry::APPLICATIONS.names(), "Flows"),
    ] {
        assert!(
            registry.contains(&name),
            "{name} is no longer registered: update this test and the reference"
        );
        names.push(name);
    }
    for name in names {
        if !doc.mentions(name) {
            p.push(format!("`{name}` is never mentioned in {}", doc.name));
        }
    }
    assert_none(p);
}

#[test]
fn every_scenario_is_listed_and_loads() {
    let doc = Doc::load("scenarios/README.md");
    let listed: Vec<String> = doc
        .table("The scenarios")
        .iter()
        .map(|row| {
            code(&row[0])
                .unwrap_or(&row[0])
                .trim_start_matches("scenarios/")
                .to_string()
        })
        .collect();
    let files = scenario_files();
    let listed_set: BTreeSet<&String> = listed.iter().collect();
    let files_set: BTreeSet<&String> = files.iter().collect();
    assert_eq!(
        listed_set, files_set,
        "scenarios/README.md lists {listed:?}, the folder has {files:?}"
    );
    for f in &files {
        if let Err(e) = rdmasim::scenario::load_path(&root().join("scenarios").join(f), &[]) {
            panic!("scenarios/{f} does not load: {e}");
        }
    }
}

#[test]
fn every_example_loads() {
    let doc = Doc::load("scenarios/README.md");
    let blocks = doc.code_blocks("ron");
    assert!(!blocks.is_empty(), "the reference has no ```ron example");
    for (i, block) in blocks.iter().enumerate() {
        if let Err(e) = rdmasim::scenario::load_text(&format!("README example {i}"), block, &[]) {
            panic!("the ```ron example {i} of scenarios/README.md does not load: {e}\n{block}");
        }
    }
    let default = root().join("scenarios/default.ron");
    let mut seen = 0;
    for line in doc.text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("--set ") {
            rest = &rest[at + "--set ".len()..];
            let (assignment, after) = match rest.strip_prefix('\'') {
                Some(quoted) => quoted.split_once('\'').expect("a closing quote"),
                None => rest.split_at(rest.find(char::is_whitespace).unwrap_or(rest.len())),
            };
            let assignment = assignment.trim_end_matches('`');
            rest = after;
            if assignment.contains("PATH") || assignment.is_empty() {
                continue; // the syntax itself, not an example
            }
            seen += 1;
            if let Err(e) = rdmasim::scenario::load_path(&default, &[assignment.to_string()]) {
                panic!("the example --set {assignment} does not apply to default.ron: {e}");
            }
        }
    }
    assert!(seen > 0, "the reference has no --set example");
}

#[test]
fn the_output_tables_match_a_run() {
    let doc = Doc::load("scenarios/README.md");
    let dir = std::env::temp_dir().join(format!("rdmasim-reference-{}", std::process::id()));
    let overrides = [
        "simulation.WarmUp=0",
        "simulation.RunTime=0.0005",
        "simulation.CoolDown=0",
    ]
    .map(String::from);
    let loaded =
        rdmasim::scenario::load_path(&root().join("scenarios/default.ron"), &overrides).expect("default.ron loads");
    let setup = rdmasim::RunSetup {
        output: engine::records::Output::Folder(dir.clone()),
        name: None,
        clock: engine::clock::WallClock::fixed_at(0),
    };
    let outcome = rdmasim::run(&loaded, &setup, None).expect("the run writes its files");
    let name = &loaded.scenario.name;
    let file = |suffix: &str| {
        let path = outcome
            .files
            .iter()
            .find(|p| p.to_string_lossy().ends_with(suffix))
            .unwrap_or_else(|| panic!("the run wrote no *{suffix}: {:?}", outcome.files));
        std::fs::read_to_string(path).expect("readable output")
    };
    let header =
        |text: &str| -> Vec<String> { text.lines().next().unwrap_or("").split(',').map(String::from).collect() };
    let first_cells = |marker: &str| -> Vec<String> {
        doc.table(marker)
            .iter()
            .map(|r| code(&r[0]).unwrap_or(&r[0]).to_string())
            .collect()
    };
    let perf = header(&file("-rdma-perf-0.csv"));
    assert_eq!(perf, scala_rdma::record::COLUMNS, "the record's header is its COLUMNS");
    assert_eq!(
        first_cells("`rdma-perf` columns"),
        perf,
        "the rdma-perf table, in file order"
    );

    // The telemetry records write these headers (their rows: tools/rdmasim/tests/telemetry.rs).
    assert_eq!(first_cells("`cc-rate` columns"), models::telemetry::CC_RATE_COLUMNS);
    assert_eq!(
        first_cells("`queue-depth` columns"),
        models::telemetry::QUEUE_DEPTH_COLUMNS
    );

    // The beacon's columns depend on the plugins a scenario selects: the table lists every
    // built-in plugin's, and a run's header is the table's rows that apply, in the table's order.
    let beacon = header(&file("-beacon-0.csv"));
    let documented = first_cells("`beacon` columns");
    let in_table: Vec<&String> = documented.iter().filter(|c| beacon.contains(c)).collect();
    assert_eq!(
        in_table,
        beacon.iter().collect::<Vec<_>>(),
        "the beacon table, in file order"
    );
    let mut registered: BTreeSet<String> = beacon.iter().cloned().collect();
    for f in scenario_files() {
        let l = rdmasim::scenario::load_path(&root().join("scenarios").join(&f), &[]).expect("loads");
        let setup = rdmasim::RunSetup {
            output: engine::records::Output::Null,
            name: None,
            clock: engine::clock::WallClock::fixed_at(0),
        };
        let app = rdmasim::build_app(&l, &setup).expect("builds");
        let columns = app.world.resource::<engine::beacon::BeaconColumns>().names();
        registered.extend(columns.into_iter().map(String::from));
    }
    for c in &documented {
        assert!(
            registered.contains(c),
            "the beacon table documents `{c}`, which no scenario's plugins write"
        );
    }

    let manifest: serde_json::Value = serde_json::from_str(&file("-manifest-0.json")).expect("JSON");
    let keys: BTreeSet<String> = manifest.as_object().expect("an object").keys().cloned().collect();
    let table: BTreeSet<String> = first_cells("`manifest` fields").into_iter().collect();
    assert_eq!(table, keys, "the manifest table and the manifest's keys");

    for path in &outcome.files {
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        let pattern = file_name
            .replacen(name.as_str(), "{simulation}", 1)
            .replace("-0.", "-{shard}.");
        assert!(
            doc.text.contains(&pattern),
            "the reference never names the file pattern {pattern}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_plugin_readme_has_its_sections_and_its_paths_exist() {
    let plugin = Doc::load("plugins/scala-rdma/README.md");
    for heading in [
        "Scope and limitations",
        "Configuration",
        "Behaviour",
        "Traces",
        "Examples and tests",
        "Validation",
        "References",
    ] {
        assert!(!plugin.section(heading).is_empty(), "the section {heading} is empty");
    }
    for doc in [Doc::load("scenarios/README.md"), plugin] {
        for piece in doc.text.split('`').skip(1).step_by(2) {
            let path = piece.split([':', ' ']).next().unwrap_or("");
            let is_source = path.contains('/') && [".rs", ".md", ".ron", ".toml"].iter().any(|e| path.ends_with(e));
            // `../shared/...` is the project's shared folder, outside the repository.
            if is_source && !path.contains('*') && !path.contains('{') && !path.starts_with("../") {
                assert!(
                    root().join(path).exists(),
                    "{} names `{path}`, which does not exist",
                    doc.name
                );
            }
        }
    }
}
