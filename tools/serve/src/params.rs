//! The spec's global simulation parameters as `PATCH .../parameters` takes them: a JSON object
//! whose values become `--set simulation.NAME=VALUE` arguments, so they are checked and applied
//! exactly as on the command line.

use serde_json::{Map, Value};

/// The parameters a configuration's `PATCH` accepts, in the order their `--set` arguments are
/// given (the spec's order).
pub const PARAMETERS: [&str; 8] = [
    "StartTime",
    "ClientStartOffset",
    "ClientStartInterval",
    "WarmUp",
    "RunTime",
    "CoolDown",
    "RandomSeed",
    "BeaconReportInterval",
];

/// Why a patch is refused before the loader sees it.
#[derive(Debug, PartialEq, Eq)]
pub struct BadParameter {
    pub parameter: String,
    pub message: String,
}

/// `value` as RON: a JSON number as written, a string (a unit such as `"10ms"`) quoted. Strings
/// are limited to the characters a number with a unit uses, so no value can reach past its field.
fn ron_value(name: &str, value: &Value) -> Result<String, BadParameter> {
    let bad = |message: String| BadParameter {
        parameter: name.to_string(),
        message,
    };
    match value {
        Value::Number(n) => Ok(n.to_string()),
        Value::String(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-._µ ".contains(c)) => {
            Ok(format!("\"{s}\""))
        }
        Value::String(s) => Err(bad(format!(
            "{name}: {s:?} is not a number or a number with a unit (e.g. \"10ms\")"
        ))),
        other => Err(bad(format!(
            "{name}: expected a number or a string such as \"10ms\", found {other}"
        ))),
    }
}

/// Applies `patch` to `current`: a `null` removes a parameter (back to the scenario's value).
/// An unknown name or a value of the wrong kind is refused, naming it.
pub fn merge(current: &Map<String, Value>, patch: &Map<String, Value>) -> Result<Map<String, Value>, BadParameter> {
    let mut out = current.clone();
    for (name, value) in patch {
        if !PARAMETERS.contains(&name.as_str()) {
            return Err(BadParameter {
                parameter: name.clone(),
                message: format!(
                    "{name}: unknown parameter; the parameters are {}",
                    PARAMETERS.join(", ")
                ),
            });
        }
        if value.is_null() {
            out.remove(name);
        } else {
            ron_value(name, value)?;
            out.insert(name.clone(), value.clone());
        }
    }
    Ok(out)
}

/// The `--set` arguments of a configuration's parameters, in [`PARAMETERS`] order.
pub fn overrides(parameters: &Map<String, Value>) -> Vec<String> {
    PARAMETERS
        .iter()
        .filter_map(|&name| {
            let v = ron_value(name, parameters.get(name)?).ok()?;
            Some(format!("simulation.{name}={v}"))
        })
        .collect()
}

/// The parameter a `simulation.NAME` field names, if any.
pub fn parameter_of(field: &str) -> Option<&'static str> {
    let name = field.strip_prefix("simulation.")?;
    PARAMETERS.iter().copied().find(|p| *p == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn values_become_set_arguments_in_the_specs_order() {
        let m = merge(
            &Map::new(),
            &obj(json!({"RandomSeed": 7, "RunTime": 0.01, "WarmUp": "2ms"})),
        )
        .unwrap();
        assert_eq!(
            overrides(&m),
            [
                "simulation.WarmUp=\"2ms\"",
                "simulation.RunTime=0.01",
                "simulation.RandomSeed=7"
            ]
        );
        let m = merge(&m, &obj(json!({"WarmUp": null}))).unwrap();
        assert_eq!(overrides(&m).len(), 2);
    }

    #[test]
    fn unknown_names_and_odd_values_are_refused_by_name() {
        let e = merge(&Map::new(), &obj(json!({"RunTme": 1}))).unwrap_err();
        assert_eq!(e.parameter, "RunTme");
        assert!(e.message.contains("unknown parameter"), "{}", e.message);
        for bad in [
            json!(true),
            json!([1]),
            json!({"a": 1}),
            json!("1, StartTime: 5"),
            json!(""),
        ] {
            let e = merge(&Map::new(), &obj(json!({ "RunTime": bad }))).unwrap_err();
            assert_eq!(e.parameter, "RunTime");
        }
        assert_eq!(parameter_of("simulation.RunTime"), Some("RunTime"));
        assert_eq!(parameter_of("topology.hosts"), None);
    }
}
