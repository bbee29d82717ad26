//! Deserializing scenario text into a config type with ron, turning every failure — syntax, an
//! unknown or missing field, a wrong type, a type's own `Deserialize`/`TryFrom` check — into a
//! [`ScenarioError`] at ron's position, with the field path `serde_path_to_error` tracked.
//!
//! Accepted syntax (ron 0.12 with `implicit_some` on by default):
//! - an optional field takes `5`, `Some(5)` or `None`;
//! - a struct variant takes its fields directly: `Star(hosts: 10)`;
//! - a newtype variant holding a struct takes it in its own parentheses: `RoceNic((Mss: "4KiB"))`,
//!   `RoceNic(())` for all defaults. A file may opt into `#![enable(unwrap_variant_newtypes)]` and
//!   write `RoceNic(Mss: "4KiB")` instead, but then every newtype variant in it must be written
//!   that way: ron 0.12 rejects the double-parenthesis form under that extension, which is why it
//!   is not on by default.

use super::diagnostic::ScenarioError;
use super::overrides::{OverrideErrorKind, apply_overrides, did_you_mean};
use super::path::{FieldPath, locate};
use super::span::{NodeKind, Span, offset_of, parse_document};
use ron::error::{Error as RonError, SpannedError};
use ron::extensions::Extensions;
use serde::de::DeserializeOwned;
use serde_path_to_error::{Segment, Track};
use std::path::Path;

/// The ron options every scenario is read with.
pub fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(Extensions::IMPLICIT_SOME)
}

/// Deserializes scenario `text`; `file` is only used in messages.
pub fn load<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, ScenarioError> {
    let options = ron_options();
    let mut de =
        ron::Deserializer::from_str_with_options(text, &options).map_err(|error| from_ron(file, text, &error, None))?;
    let mut track = Track::new();
    let result = T::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let value = match result {
        Ok(value) => value,
        Err(error) => {
            // The parser still sits where it stopped, so the span is taken from it now.
            let error = de.span_error(error);
            return Err(from_ron(file, text, &error, field_path(&track.path())));
        }
    };
    de.end()
        .map_err(|error| from_ron(file, text, &de.span_error(error), None))?;
    Ok(value)
}

/// Reads the scenario at `path`, applies `--set` assignments in order, then [`load`]s it.
/// Errors in the overridden text point into that text and say which `--set` was applied.
pub fn load_file<T: DeserializeOwned>(path: &Path, overrides: &[String]) -> Result<T, ScenarioError> {
    let file = path.display().to_string();
    let text = super::read::read_scenario(path)?;
    if overrides.is_empty() {
        return load(&file, &text);
    }
    let overridden = match apply_overrides(&text, overrides) {
        Ok(overridden) => overridden,
        Err(error) => {
            let OverrideErrorKind::Scenario { error: scan, .. } = &error.kind else {
                return Err(error.into());
            };
            // The file itself is broken: report that in the file's own text, as ron sees it.
            return Err(match load::<T>(&file, &text) {
                Err(error) => error,
                Ok(_) => ScenarioError::at_offset(&file, text.clone(), scan.offset(), None, scan.to_string()),
            });
        }
    };
    load(&file, &overridden).map_err(|mut error| {
        error.message += &override_note(error.field.as_deref(), overrides);
        error
    })
}

/// Which `--set` an error in overridden text came from: the last one whose path contains or is
/// contained in the error's field, else all of them.
fn override_note(field: Option<&str>, overrides: &[String]) -> String {
    let segments = |text: &str| FieldPath::parse(text.trim()).map(|p| p.segments).unwrap_or_default();
    let field = field.map(segments).unwrap_or_default();
    let culprit = overrides.iter().rev().find(|assignment| {
        let set = segments(assignment.split_once('=').map_or("", |(path, _)| path));
        let n = set.len().min(field.len());
        n > 0 && set[..n] == field[..n]
    });
    match culprit {
        Some(assignment) => format!(" (set by --set {assignment})"),
        None => {
            let all: Vec<String> = overrides.iter().map(|a| format!("--set {a}")).collect();
            format!(" (in the scenario after {})", all.join(", "))
        }
    }
}

/// The dotted path of the field ron was reading, without enum variant names, so it reads like a
/// `--set` path: `applications[0].NumConnections`, not `applications[0].ScalaRdma.NumConnections`.
fn field_path(path: &serde_path_to_error::Path) -> Option<String> {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out += &format!("[{index}]"),
            Segment::Map { key } if out.is_empty() => out += key,
            Segment::Map { key } => out += &format!(".{key}"),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    (!out.is_empty()).then_some(out)
}

fn from_ron(file: &str, text: &str, error: &SpannedError, field: Option<String>) -> ScenarioError {
    let mut start = offset_of(text, error.span.start.line, error.span.start.col);
    let end = offset_of(text, error.span.end.line, error.span.end.col);
    let message = message(&error.code);
    if error.code == RonError::ExpectedComma && end == start {
        // ron stops at the next token, often on the next line; the comma belongs right after
        // the previous one.
        start = text[..start].trim_end().len();
        return ScenarioError::at_range(file, text, start..start, field, message);
    }
    if let Some(value) = field.as_deref().and_then(|f| scalar_at(text, f, start)) {
        return ScenarioError::at_range(file, text, value.start..value.end, field, message);
    }
    if end > start {
        ScenarioError::at_range(file, text, start..end, field, message)
    } else {
        ScenarioError::at_offset(file, text, start, field, message)
    }
}

/// The whole scalar value at `field` if ron's error `offset` is on it or in the blanks before it.
/// ron reports where its parser stopped, which for a rejected string is inside the quotes and
/// for a wrong type can be before the value; underlining the value itself reads better.
fn scalar_at(text: &str, field: &str, offset: usize) -> Option<Span> {
    let document = parse_document(text).ok()?;
    let node = locate(&document.root, &FieldPath::parse(field).ok()?).ok()?;
    let scalar = matches!(
        node.kind,
        NodeKind::Str | NodeKind::Char | NodeKind::Number | NodeKind::Ident
    );
    let blank_before = text
        .get(offset.min(node.span.start)..node.span.start)?
        .trim()
        .is_empty();
    (scalar && blank_before && offset <= node.span.end).then_some(node.span)
}

/// ron's message, plus a suggestion where a name was mistyped or a newtype variant's
/// parentheses were left out.
fn message(code: &RonError) -> String {
    let suggestion = match code {
        RonError::NoSuchStructField { expected, found, .. } | RonError::NoSuchEnumVariant { expected, found, .. } => {
            did_you_mean(found, expected.iter().copied()).map(|s| format!("; did you mean `{s}`?"))
        }
        RonError::ExpectedDifferentStructName { found, .. } => Some(format!(
            "; if `{found}` is a field, note that a newtype variant takes its struct in its own \
             parentheses: `Variant(({found}: ..))`"
        )),
        _ => None,
    };
    format!("{code}{}", suggestion.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::SAMPLE;
    use crate::units::{Rate, Size};
    use serde::Deserialize;

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct TestScenario {
        name: String,
        simulation: Simulation,
        topology: Topology,
        nic: Nic,
        #[serde(default)]
        switch: Option<Switch>,
        applications: Vec<Application>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "PascalCase")]
    struct Simulation {
        run_time: f64,
        random_seed: u64,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    enum Topology {
        LeafSpine {
            leaves: u32,
            spines: u32,
            hosts_per_leaf: u32,
        },
        Star {
            hosts: u32,
        },
    }

    #[derive(Deserialize, Debug, PartialEq)]
    enum Nic {
        RoceNic(RoceNic),
        IdealNic,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "PascalCase")]
    struct RoceNic {
        port_rate: Rate,
        mss: Size,
        #[serde(default)]
        mtu: Option<u32>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Switch {
        buffer: Size,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    enum Application {
        ScalaRdma(ScalaRdma),
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    #[allow(non_snake_case)]
    struct ScalaRdma {
        prScalaRdmaInitiator: f64,
        NumConnections: NumConnections,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(try_from = "u32")]
    struct NumConnections(u32);

    impl TryFrom<u32> for NumConnections {
        type Error = String;
        fn try_from(n: u32) -> Result<Self, String> {
            match n {
                1..=1024 => Ok(NumConnections(n)),
                _ => Err(format!("NumConnections must be from 1 to 1,024, not {n}")),
            }
        }
    }

    fn load_err(text: &str) -> ScenarioError {
        match load::<TestScenario>("s.ron", text) {
            Ok(value) => panic!("loaded {value:?}"),
            Err(error) => error,
        }
    }

    /// 1-based line and column of the first occurrence of `needle` in `text`.
    fn position(text: &str, needle: &str) -> (usize, usize) {
        crate::scenario::span::line_col(text, text.find(needle).expect("needle in text"))
    }

    #[test]
    fn loads_the_sample() {
        let scenario: TestScenario = load("s.ron", SAMPLE).unwrap();
        assert_eq!(
            scenario.simulation,
            Simulation {
                run_time: 0.5,
                random_seed: 18760
            }
        );
        assert_eq!(
            scenario.topology,
            Topology::LeafSpine {
                leaves: 4,
                spines: 4,
                hosts_per_leaf: 4
            }
        );
        let expected_nic = RoceNic {
            port_rate: Rate::gbps(400),
            mss: Size(4096),
            mtu: None,
        };
        assert_eq!(scenario.nic, Nic::RoceNic(expected_nic));
        assert_eq!(scenario.switch, Some(Switch { buffer: Size(32 << 20) }));
        assert_eq!(
            scenario.applications[0],
            Application::ScalaRdma(ScalaRdma {
                prScalaRdmaInitiator: 0.5,
                NumConnections: NumConnections(1)
            })
        );
    }

    #[test]
    fn accepted_variant_syntax() {
        let star = SAMPLE.replace("LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 4)", "Star(hosts: 10)");
        assert_eq!(
            load::<TestScenario>("s.ron", &star).unwrap().topology,
            Topology::Star { hosts: 10 }
        );
        let defaults = SAMPLE.replace(r#"RoceNic((PortRate: "400Gbps", Mss: "4KiB"))"#, "IdealNic");
        assert_eq!(load::<TestScenario>("s.ron", &defaults).unwrap().nic, Nic::IdealNic);
        let implicit_some = SAMPLE.replace(r#"Mss: "4KiB""#, r#"Mss: "4KiB", Mtu: 9000"#);
        let Nic::RoceNic(nic) = load::<TestScenario>("s.ron", &implicit_some).unwrap().nic else {
            panic!()
        };
        assert_eq!(nic.mtu, Some(9000));
        // Opting into unwrap_variant_newtypes changes how every newtype variant is written.
        let unwrapped = SAMPLE
            .replace("implicit_some", "unwrap_variant_newtypes")
            .replace("RoceNic((", "RoceNic(")
            .replace("\"4KiB\"))", "\"4KiB\")")
            .replace("ScalaRdma((", "ScalaRdma(")
            .replace("1))]", "1)]");
        assert_eq!(load::<TestScenario>("s.ron", &unwrapped).unwrap().name, "default");
        let single = SAMPLE
            .replace("RoceNic((", "RoceNic(")
            .replace("\"4KiB\"))", "\"4KiB\")");
        let err = load_err(&single);
        assert_eq!(err.field.as_deref(), Some("nic"));
        assert!(err.message.contains("`Variant((PortRate: ..))`"), "{}", err.message);
    }

    #[test]
    fn syntax_errors_are_located() {
        // The parser wants a comma after `"default"` (and finds `simulation` on the next line).
        let text = SAMPLE.replace("\"default\",", "\"default\"");
        let err = load_err(&text);
        let (line, column) = position(&text, "\"default\"");
        assert_eq!((err.line, err.column), (line, column + "\"default\"".len()));
        assert_eq!(err.message, "Expected comma");
        assert!(err.render().contains("4 │     name: \"default\"\n"), "{}", err.render());
        // A missing `)`: the parser runs off the end of the list item.
        let text = SAMPLE.replace("NumConnections: 1))]", "NumConnections: 1)]");
        let err = load_err(&text);
        let (line, column) = position(&text, "1)]");
        assert_eq!((err.line, err.column), (line, column + 2), "{err}");
        assert_eq!(err.message, "Expected closing `)`");
    }

    #[test]
    fn unknown_field_names_the_expected_ones() {
        let text = SAMPLE.replace("Mss:", "Msss:");
        let err = load_err(&text);
        assert_eq!(err.field.as_deref(), Some("nic.Msss"));
        assert_eq!((err.line, err.column), position(&text, "Msss"));
        assert_eq!(
            err.to_string(),
            format!(
                "s.ron:{}:{}: nic.Msss: Unexpected field named `Msss` in `RoceNic`, expected one of `PortRate`, \
                 `Mss`, or `Mtu` instead; did you mean `Mss`?",
                err.line, err.column
            )
        );
    }

    #[test]
    fn wrong_type_is_located_at_the_value() {
        let text = SAMPLE.replace("RunTime: 0.5", "RunTime: \"fast\"");
        let err = load_err(&text);
        assert_eq!(err.field.as_deref(), Some("simulation.RunTime"));
        assert_eq!((err.line, err.column), position(&text, "\"fast\""));
    }

    #[test]
    fn a_types_own_check_is_located_at_the_value() {
        let text = SAMPLE.replace("NumConnections: 1", "NumConnections: 2000");
        let err = load_err(&text);
        assert_eq!(err.field.as_deref(), Some("applications[0].NumConnections"));
        assert_eq!((err.line, err.column), position(&text, "2000"));
        assert_eq!(err.message, "NumConnections must be from 1 to 1,024, not 2000");
        let text = SAMPLE.replace("400Gbps", "400Gbs");
        let err = load_err(&text);
        assert_eq!(err.field.as_deref(), Some("nic.PortRate"));
        assert_eq!((err.line, err.column), position(&text, "\"400Gbs\""));
    }

    #[test]
    fn missing_field_points_at_its_struct() {
        let err = load_err(&SAMPLE.replace("RandomSeed: 18760", ""));
        assert_eq!(err.field.as_deref(), Some("simulation"));
        assert!(
            err.message.contains("missing field named `RandomSeed`"),
            "{}",
            err.message
        );
        assert_eq!(err.line, 5);
    }

    fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("rdmasim-scenario-{}-{name}.ron", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn load_file_applies_overrides_and_reports_them() {
        let path = temp_file("overrides", SAMPLE);
        let sets = ["topology=Star(hosts: 10)".to_owned(), "nic.Mtu=9000".to_owned()];
        let scenario: TestScenario = load_file(&path, &sets).unwrap();
        assert_eq!(scenario.topology, Topology::Star { hosts: 10 });
        let err = load_file::<TestScenario>(&path, &["simulation.RunTme=0.01".to_owned()]).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("simulation.RunTme"));
        assert!(err.message.contains("did you mean `RunTime`?"), "{}", err.message);
        assert!(
            err.message.ends_with(" (set by --set simulation.RunTme=0.01)"),
            "{}",
            err.message
        );
        assert_eq!(err.file, path.display().to_string());
        let err = load_file::<TestScenario>(&path, &["applications[1].NumConnections=2".to_owned()]).unwrap_err();
        assert_eq!(err.file, "<--set>");
        assert!(err.message.contains("`applications` has 1 item"), "{}", err.message);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn load_file_reports_a_broken_file_in_its_own_text() {
        let path = temp_file("broken", &SAMPLE.replace("\"default\",", "\"default\""));
        let err = load_file::<TestScenario>(&path, &["name=\"x\"".to_owned()]).unwrap_err();
        assert_eq!((err.line, err.column, err.message.as_str()), (4, 20, "Expected comma"));
        std::fs::remove_file(&path).unwrap();
        let err = load_file::<TestScenario>(&path, &[]).unwrap_err();
        assert_eq!((err.line, err.field.as_ref()), (0, None));
        assert!(
            err.to_string()
                .starts_with(&format!("{}: cannot read the scenario: ", path.display()))
        );
    }

    #[test]
    fn never_panics_on_prefixes_or_damaged_text() {
        let check = |text: &str| {
            if let Err(error) = load::<TestScenario>("s.ron", text) {
                let _ = error.render();
            }
            let sets = ["nic.Mtu=1".to_owned(), "applications[0].NumConnections=2".to_owned()];
            if let Err(error) = apply_overrides(text, &sets) {
                let _ = ScenarioError::from(error).render();
            }
        };
        let boundaries: Vec<usize> = (0..=SAMPLE.len()).filter(|&i| SAMPLE.is_char_boundary(i)).collect();
        for &end in &boundaries {
            check(&SAMPLE[..end]);
        }
        // Each char deleted, or replaced by one that opens or closes something.
        for pair in boundaries.windows(2) {
            for with in ["", "(", ")", "\"", "'", "/*", "é"] {
                check(&format!("{}{with}{}", &SAMPLE[..pair[0]], &SAMPLE[pair[1]..]));
            }
        }
    }
}
