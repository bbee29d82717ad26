//! A scenario file: its RON type, loading with `--set` overrides, and every check that needs
//! more than one field (timeline, topology, switch buffer, NIC pools, placement), each reported
//! with the file, line, column and field.

use engine::params::{SimulationParameters, Timeline};
use engine::registry::Selection;
use engine::scenario::{FieldError, FieldPath, ScenarioError, apply_overrides, load, read_scenario, value_span};
use models::application::{AppContext, AppPlacement, Plan, split_ratios};
use models::nic::NicModel;
use models::placement::{ComponentRatio, assign_hosts, host_counts, nodes_of};
use models::registry::{APPLICATIONS, ApplicationModel, NICS, SWITCHES};
use models::topology::{Topology, TopologyConfig};
use serde::Deserialize;
use std::path::Path;

/// A scenario as written in RON. Unknown fields are rejected.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The simulation's name: it names the output files (`{name}-{record}-{shard}.csv`).
    pub name: String,
    /// The spec's global simulation parameters.
    #[serde(default)]
    pub simulation: SimulationParameters,
    /// The fabric's shape: `Star(..)`, `LeafSpine(..)`, `FatTree(..)` or `Explicit(..)`.
    #[serde(default)]
    pub topology: TopologyConfig,
    /// The NIC model, by name: `RoceNic((...))` or `IdealNic((...))`.
    pub nic: Selection<dyn NicModel>,
    /// The switch model, by name: `SharedBuffer((...))` (the default; `(...)` for short) or
    /// `OutputQueued(())`.
    #[serde(default)]
    pub switch: crate::switch_choice::SwitchChoice,
    /// The applications, by name: `[ScalaRdma((...))]`.
    pub applications: Vec<Selection<dyn ApplicationModel>>,
    /// The progress watchdog: stall and PFC deadlock timeouts, and whether a finding fails the run.
    #[serde(default)]
    pub watchdog: models::watchdog::WatchdogConfig,
    /// How `run --shards N` (or `mpirun -n N`) splits the fabric: each shard's switches by name,
    /// hosts going with their first switch. Default `[]`: computed (`models::shard::Partition`).
    #[serde(default)]
    pub partition: Vec<Vec<String>>,
    /// Telemetry records sampled at an interval: `cc-rate`, `queue-depth`. Default off.
    #[serde(default)]
    pub telemetry: models::telemetry::TelemetryConfig,
    /// Injected faults: `Loss(..)`, `LinkDown(..)` on links, `SlowReceiver(..)` on a NIC. Default none.
    #[serde(default)]
    pub faults: models::fabric::faults::FaultConfig,
}

/// A loaded, checked scenario and what was derived from it.
#[derive(Debug)]
pub struct Loaded {
    /// The file it came from, as messages name it.
    pub file: String,
    /// The text after `--set` overrides.
    pub text: String,
    /// The parsed scenario.
    pub scenario: Scenario,
    /// The run's times (start, recording window, stop, beacon interval).
    pub timeline: Timeline,
    /// The fabric built from the scenario's topology.
    pub topology: Topology,
    /// Each application's hosts, in scenario order.
    pub placements: Vec<AppPlacement>,
    /// Each application's part of the plan (connection ids from 0), in scenario order.
    pub parts: Vec<Plan>,
    /// The whole plan: the parts in scenario order, connections numbered as the run numbers them.
    pub plan: Plan,
    /// FNV-1a of the text, continued over the text of every file it names (an htsim matrix):
    /// the manifest's scenario hash and part of `job_id`.
    pub hash: u64,
}

/// Registers the built-in models (idempotent).
pub fn register_builtins() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        NICS.register::<roce_nic::RoceNicConfig>("RoceNic");
        NICS.register::<ideal_nic::IdealNicConfig>("IdealNic");
        APPLICATIONS.register::<scala_rdma::ScalaRdmaConfig>("ScalaRdma");
        APPLICATIONS.register::<flows::FlowsConfig>("Flows");
        SWITCHES.register::<models::fabric::SwitchConfig>(crate::switch_choice::SHARED_BUFFER);
        SWITCHES.register::<oq_switch::OqSwitchConfig>("OutputQueued");
        models::cc::CONTROLLERS.register::<fixed_rate_cc::FixedRateConfig>("FixedRate");
        models::cc::CONTROLLERS.register::<hpcc::HpccConfig>("Hpcc");
        models::cc::CONTROLLERS.register::<dcqcn::DcqcnConfig>("Dcqcn");
    });
}

/// The 64-bit FNV-1a hash of `text`: the scenario hash (stable across builds and platforms).
pub fn fnv1a(text: &str) -> u64 {
    fnv1a_from(0xcbf2_9ce4_8422_2325, text)
}

/// FNV-1a-64 continued from `h` over `text`.
pub fn fnv1a_from(h: u64, text: &str) -> u64 {
    text.bytes()
        .fold(h, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3))
}

/// Reads, overrides, parses and checks a scenario file.
pub fn load_path(path: &Path, overrides: &[String]) -> Result<Loaded, Box<ScenarioError>> {
    let file = path.display().to_string();
    let text = read_scenario(path)?;
    load_text(&file, &text, overrides)
}

/// As `load_path`, from text (`file` names it in messages). A problem that only a `--set` brings
/// in is shown in that argument (`<--set>:1:COLUMN`), not at the rewritten text's lines; one the
/// file has on its own is shown in the file as written.
pub fn load_text(file: &str, text: &str, overrides: &[String]) -> Result<Loaded, Box<ScenarioError>> {
    register_builtins();
    let full = match apply_overrides(text, overrides) {
        Ok(t) => t,
        Err(e) => {
            // A file that does not even scan: report that first, in its own text.
            load::<Scenario>(file, text)?;
            return Err(Box::new(e.into()));
        }
    };
    match load_checked(file, full) {
        Ok(loaded) => Ok(loaded),
        Err(failure) if overrides.is_empty() => Err(Box::new(failure.in_file(file, text))),
        Err(failure) => Err(Box::new(blame_override(file, text, overrides, failure))),
    }
}

/// Why a text is refused: ron's error, already placed in the text, or a check's, by field.
enum Failure {
    Load(Box<ScenarioError>),
    Check(FieldError),
}

impl Failure {
    fn in_file(self, file: &str, text: &str) -> ScenarioError {
        match self {
            Failure::Load(e) => *e,
            Failure::Check(e) => ScenarioError::at_field(file, text, &e.field, e.message),
        }
    }
}

fn load_checked(file: &str, text: String) -> Result<Loaded, Failure> {
    let mut scenario: Scenario = load(file, &text).map_err(|e| Failure::Load(Box::new(e)))?;
    scenario.switch = scenario
        .switch
        .resolve(file, &text)
        .map_err(|e| Failure::Load(Box::new(e)))?;
    // Files an application names are relative to the scenario's folder.
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let mut inputs = Vec::new();
    for (i, a) in scenario.applications.iter_mut().enumerate() {
        let files = a
            .value
            .load_files(dir)
            .map_err(|e| Failure::Check(e.under(&format!("applications[{i}]"))))?;
        inputs.extend(files);
    }
    let loaded = check(text, scenario).map_err(Failure::Check)?;
    // The files read are part of the run's identity: the same scenario over another matrix is
    // another scenario.
    let hash = inputs.iter().fold(loaded.hash, |h, t| fnv1a_from(h, t));
    Ok(Loaded {
        file: file.to_string(),
        hash,
        ..loaded
    })
}

/// The error of a text that is refused only after `--set`: the file's own, in the file, if it is
/// refused without them; else the first override's that makes it fail, shown in that argument
/// (where ron's error lies in its value, there; at its path for a field it made up; else the
/// whole value).
fn blame_override(file: &str, original: &str, overrides: &[String], failure: Failure) -> ScenarioError {
    if let Err(own) = load_checked(file, original.to_string()) {
        return own.in_file(file, original);
    }
    let mut first_check = None;
    for (k, set) in overrides.iter().enumerate() {
        let Ok(text) = apply_overrides(original, &overrides[..=k]) else {
            break;
        };
        let e = match (load_checked(file, text.clone()), &failure) {
            (Ok(_), _) => continue,
            // The final text's message (the later `--set`s may change what is wrong), shown in
            // the first argument that makes that field fail.
            (Err(Failure::Check(e)), Failure::Check(last)) if e.field == last.field => {
                return in_set_value(set, 0, Some(last.field.clone()), last.message.clone());
            }
            (Err(Failure::Check(e)), Failure::Check(_)) if k + 1 < overrides.len() => {
                first_check.get_or_insert((k, e));
                continue;
            }
            (Err(Failure::Check(e)), _) => return in_set_value(set, 0, Some(e.field), e.message),
            (Err(Failure::Load(e)), _) => e,
        };
        let eq = set.find('=').unwrap_or(set.len());
        let path = set[..eq].trim();
        let value = FieldPath::parse(path).ok().and_then(|p| value_span(&text, &p).ok());
        let offset = e.span.map(|s| s.offset());
        let field = e.field.clone().or_else(|| Some(path.to_string()));
        return match (value, offset) {
            (Some(v), Some(o)) if (v.start..=v.end).contains(&o) => in_set_value(set, o - v.start, field, e.message),
            _ if e.message.contains("field named") => {
                ScenarioError::at_range("<--set>", set.clone(), 0..eq, Some(path.to_string()), e.message)
            }
            _ => in_set_value(set, 0, field, e.message),
        };
    }
    match first_check {
        Some((k, e)) => in_set_value(&overrides[k], 0, Some(e.field), e.message),
        None => failure.in_file(file, original),
    }
}

/// An error shown in a `--set` argument: at byte `at` of its value (trimmed), to the value's end.
fn in_set_value(set: &str, at: usize, field: Option<String>, message: String) -> ScenarioError {
    let eq = set.find('=').map_or(set.len(), |i| i + 1);
    let value = &set[eq..];
    let start = eq + (value.len() - value.trim_start().len());
    let end = eq + value.trim_end().len();
    ScenarioError::at_range("<--set>", set.to_string(), (start + at).min(end)..end, field, message)
}

/// The checks that need more than one field, in order; the error's field is from the top of the
/// scenario (`switch.PfcXon`, `nic.EgressBufferManager.BufferSize`).
fn check(text: String, scenario: Scenario) -> Result<Loaded, FieldError> {
    let at = |field: &str, msg: String| FieldError::new(field, msg);
    if let Err(why) = engine::records::check_name(&scenario.name) {
        return Err(at("name", format!("the name names the output files: {why}")));
    }
    // Some models' messages start with their field, which the error's own prefix already names.
    let unprefixed = |field: &str, msg: String| {
        msg.strip_prefix(&format!("{field}: "))
            .map_or(msg.clone(), str::to_string)
    };
    let timeline = Timeline::from_params(&scenario.simulation).map_err(|e| {
        let field = format!("simulation.{}", e.field);
        at(&field, unprefixed(&field, e.to_string()))
    })?;
    let topology = scenario
        .topology
        .build()
        .map_err(|e| at(e.field(), unprefixed(e.field(), e.to_string())))?;
    scenario.faults.validate(&topology)?;
    if !scenario.partition.is_empty() {
        models::shard::Partition::given(&topology, &scenario.partition).map_err(|e| e.under("partition"))?;
    }
    let max_ports = topology.nodes.iter().map(|n| n.ports.len()).max().unwrap_or(0);
    scenario
        .switch
        .model()
        .validate(max_ports)
        .map_err(|e| e.under("switch"))?;
    scenario.nic.value.validate().map_err(|e| e.under("nic"))?;
    if let Some(rate) = scenario.nic.value.port_rate() {
        for link in &topology.links {
            let host_end = [link.a.0, link.b.0]
                .into_iter()
                .find(|&n| (n as usize) < topology.num_hosts);
            if let Some(h) = host_end
                && link.rate != rate
            {
                return Err(at(
                    "nic.PortRate",
                    format!(
                        "the NIC's port runs at {rate} but host {} ({}) is linked at {}: set the host links' rate to the port rate",
                        h, topology.nodes[h as usize].name, link.rate
                    ),
                ));
            }
        }
    }
    if scenario.applications.is_empty() {
        return Err(at(
            "applications",
            "list at least one application, e.g. [ScalaRdma(())]".into(),
        ));
    }
    let host_names: Vec<String> = topology.nodes[..topology.num_hosts]
        .iter()
        .map(|n| n.name.clone())
        .collect();
    let ctx = AppContext {
        num_hosts: topology.num_hosts,
        host_names: &host_names,
        pools: scenario.nic.value.pools(),
    };
    for (i, a) in scenario.applications.iter().enumerate() {
        let entry = format!("applications[{i}]");
        a.value.validate().map_err(|e| e.under(&entry))?;
        a.value.check(&ctx).map_err(|e| e.under(&entry))?;
    }
    let placements = place(&scenario.applications, topology.num_hosts)?;
    let seed = scenario.simulation.RandomSeed;
    let parts: Vec<Plan> = scenario
        .applications
        .iter()
        .zip(&placements)
        .map(|(a, p)| a.value.plan(p, seed))
        .collect();
    let mut plan = Plan::default();
    for part in &parts {
        plan.append(part.clone());
    }
    let hash = fnv1a(&text);
    Ok(Loaded {
        // `load_checked` names it.
        file: String::new(),
        text,
        scenario,
        timeline,
        topology,
        placements,
        parts,
        plan,
        hash,
    })
}

/// Every application's hosts from the one budget: the ratios with the even split of those left
/// out, then the spec's floor and top-up rule over all the entries, in scenario order, then node
/// ids in that order (`models::placement`).
fn place(apps: &[Selection<dyn ApplicationModel>], num_hosts: usize) -> Result<Vec<AppPlacement>, FieldError> {
    let entries: Vec<_> = apps.iter().map(|a| a.value.distribution()).collect();
    let split = split_ratios(&entries)?;
    let ratios: Vec<ComponentRatio> = entries
        .iter()
        .zip(&split)
        .enumerate()
        .flat_map(|(app, (es, rs))| {
            es.iter()
                .zip(rs)
                .enumerate()
                .map(move |(entry, (e, &ratio))| ComponentRatio {
                    app,
                    entry,
                    component: e.component,
                    ratio,
                })
        })
        .collect();
    let placed = if ratios.is_empty() {
        Vec::new()
    } else {
        let counts = host_counts(&ratios, num_hosts)
            .map_err(|e| FieldError::new("applications", format!("{e} (the topology has {num_hosts} hosts)")))?;
        assign_hosts(&counts, &ratios)
    };
    Ok(split
        .into_iter()
        .enumerate()
        .map(|(index, ratios)| AppPlacement {
            index,
            hosts: (0..ratios.len()).map(|entry| nodes_of(&placed, index, entry)).collect(),
            ratios,
        })
        .collect())
}
