//! The scenario's `switch`: a switch model by name (`switch: OutputQueued(())`,
//! `switch: SharedBuffer((...))`), or an unnamed struct (`switch: (...)`), which is the
//! shared-buffer switch's settings, as every scenario wrote it before the model was selectable.
//!
//! ron tells the two apart only when asked for "any" value, and then drops a variant's name: the
//! unnamed form is read in place (its errors point into it as before), the named form is read in
//! a second pass over the text as a `Selection`, with every other field ignored.

use engine::registry::Selection;
use engine::scenario::{FieldPath, ScenarioError, load, value_span};
use models::fabric::SwitchConfig;
use models::registry::SwitchModelConfig;
use serde::de::value::MapAccessDeserializer;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;

/// The name the shared-buffer switch is registered under.
pub const SHARED_BUFFER: &str = "SharedBuffer";

/// The switch model a scenario selects.
#[derive(Debug)]
pub enum SwitchChoice {
    Selected(Selection<dyn SwitchModelConfig>),
    /// Written as `Name(...)` (or `()`): `resolve` reads it.
    Named,
}

impl SwitchChoice {
    fn shared_buffer(cfg: SwitchConfig) -> SwitchChoice {
        SwitchChoice::Selected(Selection {
            name: SHARED_BUFFER,
            value: Box::new(cfg),
        })
    }

    /// The selected model's config. Panics before `resolve` (a bug in the loader).
    pub fn model(&self) -> &dyn SwitchModelConfig {
        match self {
            SwitchChoice::Selected(s) => &*s.value,
            SwitchChoice::Named => panic!("the switch model is read after the scenario (`resolve`)"),
        }
    }

    /// The selected model's name.
    pub fn name(&self) -> &'static str {
        match self {
            SwitchChoice::Selected(s) => s.name,
            SwitchChoice::Named => "?",
        }
    }

    /// The second pass: reads a named switch from the whole scenario `text`.
    pub fn resolve(self, file: &str, text: &str) -> Result<SwitchChoice, ScenarioError> {
        if !matches!(self, SwitchChoice::Named) {
            return Ok(self);
        }
        let path = FieldPath::parse("switch").expect("a valid path");
        if value_span(text, &path).is_ok_and(|s| s.text(text).trim() == "()") {
            return Ok(SwitchChoice::default());
        }
        #[derive(Deserialize)]
        struct Named {
            switch: Selection<dyn SwitchModelConfig>,
        }
        Ok(SwitchChoice::Selected(load::<Named>(file, text)?.switch))
    }
}

impl Default for SwitchChoice {
    fn default() -> Self {
        SwitchChoice::shared_buffer(SwitchConfig::default())
    }
}

impl<'de> Deserialize<'de> for SwitchChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ChoiceVisitor)
    }
}

struct ChoiceVisitor;

impl<'de> Visitor<'de> for ChoiceVisitor {
    type Value = SwitchChoice;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a switch model written as Name((...)), or the shared-buffer switch's settings (...)")
    }
    /// `(Field: value, ...)`: the shared-buffer switch.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SwitchChoice, A::Error> {
        SwitchConfig::deserialize(MapAccessDeserializer::new(map)).map(SwitchChoice::shared_buffer)
    }
    /// `()` or a bare name: told apart in `resolve`.
    fn visit_unit<E>(self) -> Result<SwitchChoice, E> {
        Ok(SwitchChoice::Named)
    }
    /// `Name(...)`: its content is read again in `resolve`.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SwitchChoice, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(SwitchChoice::Named)
    }
}
