//! A scenario file: its RON type, loading with `--set` overrides, and every check that needs
//! more than one field (timeline, topology, switch buffer, NIC pools, placement), each reported
//! with the file, line, column and field.

use engine::params::{SimulationParameters, Timeline};
use engine::registry::Selection;
use engine::scenario::{ScenarioError, apply_overrides, load, read_scenario};
use models::fabric::SwitchConfig;
use models::registry::{APPLICATIONS, ApplicationModel, NICS, NicModel};
use models::topology::{Topology, TopologyConfig};
use scala_rdma::{Plan, ScalaRdmaConfig};
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
    /// The switch model's settings.
    #[serde(default)]
    pub switch: SwitchConfig,
    /// The applications, by name: `[ScalaRdma((...))]`.
    pub applications: Vec<Selection<dyn ApplicationModel>>,
    /// The progress watchdog: stall and PFC deadlock timeouts, and whether a finding fails the run.
    #[serde(default)]
    pub watchdog: models::watchdog::WatchdogConfig,
    /// Injected faults: `Loss(..)`, `LinkDown(..)` on links, `SlowReceiver(..)` on a NIC. Default none.
    #[serde(default)]
    pub faults: models::fabric::faults::FaultConfig,
}

/// A loaded, checked scenario and what was derived from it.
#[derive(Debug)]
pub struct Loaded {
    pub file: String,
    /// The text after `--set` overrides.
    pub text: String,
    pub scenario: Scenario,
    pub timeline: Timeline,
    pub topology: Topology,
    pub plan: Plan,
    /// FNV-1a of the text: the manifest's scenario hash and part of `job_id`.
    pub hash: u64,
}

impl Loaded {
    /// The Scala RDMA applications, in scenario order.
    pub fn scala_apps(&self) -> Vec<ScalaRdmaConfig> {
        scala_apps(&self.scenario)
    }
}

fn scala_apps(s: &Scenario) -> Vec<ScalaRdmaConfig> {
    s.applications
        .iter()
        .filter_map(|a| a.value.as_any().downcast_ref::<ScalaRdmaConfig>().cloned())
        .collect()
}

/// Registers the built-in models (idempotent).
pub fn register_builtins() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        NICS.register::<roce_nic::RoceNicConfig>("RoceNic");
        NICS.register::<ideal_nic::IdealNicConfig>("IdealNic");
        APPLICATIONS.register::<ScalaRdmaConfig>("ScalaRdma");
    });
}

pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Reads, overrides, parses and checks a scenario file.
pub fn load_path(path: &Path, overrides: &[String]) -> Result<Loaded, Box<ScenarioError>> {
    let file = path.display().to_string();
    let text = read_scenario(path)?;
    load_text(&file, &text, overrides)
}

/// As `load_path`, from text (`file` names it in messages).
pub fn load_text(file: &str, text: &str, overrides: &[String]) -> Result<Loaded, Box<ScenarioError>> {
    register_builtins();
    let original = text;
    let text = if overrides.is_empty() {
        text.to_string()
    } else {
        match apply_overrides(text, overrides) {
            Ok(t) => t,
            Err(e) => {
                // A file that does not even scan: report that first, in its own text.
                load::<Scenario>(file, text)?;
                return Err(Box::new(e.into()));
            }
        }
    };
    let scenario: Scenario = match load(file, &text) {
        Ok(s) => s,
        // An unknown field that only a `--set` brought in is that argument's fault.
        Err(e) if !overrides.is_empty() && e.message.contains("field named") => {
            return Err(Box::new(blame_override(file, original, overrides, e)));
        }
        Err(e) => return Err(Box::new(e)),
    };
    check(file, text, scenario)
}

/// A text that fails to load only after `--set`: the error is the first override's that makes it
/// fail, pointed into that `--set` argument (its path for an unknown field, else its value), not at
/// the rewritten text's lines; a file that fails on its own is reported in its own text. Only
/// unknown fields come here today: a bad value is still shown in the rewritten text.
fn blame_override(file: &str, original: &str, overrides: &[String], error: ScenarioError) -> ScenarioError {
    if let Err(own) = load::<Scenario>(file, original) {
        return own;
    }
    for k in 0..overrides.len() {
        let Ok(text) = apply_overrides(original, &overrides[..=k]) else {
            break;
        };
        if let Err(e) = load::<Scenario>(file, &text) {
            let set = &overrides[k];
            let eq = set.find('=').unwrap_or(set.len());
            let range = if e.message.contains("field named") {
                0..eq
            } else {
                (eq + 1).min(set.len())..set.len()
            };
            return ScenarioError::at_range("<--set>", set.clone(), range, Some(set[..eq].to_string()), e.message);
        }
    }
    error
}

fn check(file: &str, text: String, scenario: Scenario) -> Result<Loaded, Box<ScenarioError>> {
    let at = |field: &str, msg: String| Box::new(ScenarioError::at_field(file, text.clone(), field, msg));
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
    scenario
        .faults
        .validate(&topology)
        .map_err(|e| at(&e.field, e.message))?;
    let max_ports = topology.nodes.iter().map(|n| n.ports.len()).max().unwrap_or(0);
    scenario.switch.validate(max_ports).map_err(|e| at("switch", e))?;
    scenario.nic.value.validate().map_err(|e| {
        let field = e
            .split([':', ' '])
            .next()
            .filter(|f| f.chars().next().is_some_and(char::is_uppercase));
        at(&field.map_or("nic".to_string(), |f| format!("nic.{f}")), e.clone())
    })?;
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
    let pools = scenario.nic.value.pools();
    let apps = scala_apps(&scenario);
    for (i, a) in apps.iter().enumerate() {
        a.validate_against_pools(&pools.egress, &pools.ingress)
            .map_err(|e| at(&format!("applications[{i}].RdmaDataPacketTC"), e.to_string()))?;
    }
    let plan = Plan::compute(&apps, topology.num_hosts, scenario.simulation.RandomSeed).map_err(|e| {
        at(
            "applications",
            format!("{e} (the topology has {} hosts)", topology.num_hosts),
        )
    })?;
    let hash = fnv1a(&text);
    Ok(Loaded {
        file: file.to_string(),
        text,
        scenario,
        timeline,
        topology,
        plan,
        hash,
    })
}
