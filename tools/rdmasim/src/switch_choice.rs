//! The scenario's `switch`: a switch model by name (`switch: OutputQueued(())`,
//! `switch: SharedBuffer((...))`), or an unnamed struct (`switch: (...)`), which is the
//! shared-buffer switch's settings, as every scenario wrote it before the model was selectable.
//!
//! ron tells the two apart only when asked for "any" value, and then drops a variant's name: the
//! unnamed form is read in place (its errors point into it as before), the named form is read in
//! a second pass over the text as a `Selection`, with every other field ignored.
// A `ScenarioError` carries its source snippet; it is built once per bad file, never on a hot path.
#![allow(clippy::result_large_err)]

use engine::registry::Selection;
use engine::scenario::{FieldPath, ScenarioError, load, value_span};
use models::fabric::SwitchConfig;
use models::registry::SwitchModelConfig;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Error, IgnoredAny, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;

/// The name the shared-buffer switch is registered under.
pub const SHARED_BUFFER: &str = "SharedBuffer";

/// The switch model a scenario selects.
pub struct SwitchChoice {
    /// `None` while a `Name(...)` waits for `resolve`.
    selected: Option<Selection<dyn SwitchModelConfig>>,
    /// Read as a unit: `()`, or a bare name that `resolve` refuses.
    unit: bool,
}

impl SwitchChoice {
    fn shared_buffer(cfg: SwitchConfig) -> SwitchChoice {
        SwitchChoice {
            selected: Some(Selection {
                name: SHARED_BUFFER,
                value: Box::new(cfg),
            }),
            unit: false,
        }
    }

    /// The selected model's config. Panics before `resolve` (a bug in the loader).
    pub fn model(&self) -> &dyn SwitchModelConfig {
        let selected = self.selected.as_ref();
        &*selected
            .expect("the switch model is read after the scenario (`resolve`)")
            .value
    }

    /// The selected model's name.
    pub fn name(&self) -> &'static str {
        self.selected.as_ref().map_or("?", |s| s.name)
    }

    /// The second pass: reads a named switch from the whole scenario `text`.
    pub fn resolve(self, file: &str, text: &str) -> Result<SwitchChoice, ScenarioError> {
        let path = FieldPath::parse("switch").expect("a valid path");
        let unit = || value_span(text, &path).is_ok_and(|s| s.text(text).trim() == "()");
        if self.selected.is_some() && (!self.unit || unit()) {
            return Ok(self);
        }
        #[derive(Deserialize)]
        struct Named {
            switch: Selection<dyn SwitchModelConfig>,
        }
        let selected = load::<Named>(file, text)?.switch;
        Ok(SwitchChoice {
            selected: Some(selected),
            unit: false,
        })
    }
}

impl Default for SwitchChoice {
    fn default() -> Self {
        SwitchChoice::shared_buffer(SwitchConfig::default())
    }
}

impl fmt::Debug for SwitchChoice {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.selected {
            Some(s) => s.fmt(f),
            None => f.write_str("Name(...), not read yet"),
        }
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
        SwitchConfig::deserialize(MapAccessDeserializer::new(KnownFields(map))).map(SwitchChoice::shared_buffer)
    }
    /// `()`, or a bare name, which `resolve` tells apart.
    fn visit_unit<E>(self) -> Result<SwitchChoice, E> {
        Ok(SwitchChoice {
            unit: true,
            ..SwitchChoice::default()
        })
    }
    /// `Name(...)`: its content is read again in `resolve`.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SwitchChoice, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(SwitchChoice {
            selected: None,
            unit: false,
        })
    }
}

/// The fields of an unnamed switch struct, refused as ron refuses an unknown field of a named
/// one (read "any", ron would name the scenario as the struct that has no such field).
struct KnownFields<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for KnownFields<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        match self.0.next_key_seed(KnownKey)? {
            Some(key) => seed.deserialize(key.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }
}

/// A key of `SwitchConfig`, refused while it is read (so the error's field path has it).
struct KnownKey;

impl<'de> DeserializeSeed<'de> for KnownKey {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        let key = String::deserialize(d)?;
        // ron's own message for the key in a `SwitchConfig`, if it is not one of its fields.
        if let Err(e) = ron::from_str::<SwitchConfig>(&format!("({key}: ())"))
            && let ron::Error::NoSuchStructField { expected, .. } = &e.code
        {
            let hint = engine::scenario::did_you_mean(&key, expected.iter().copied());
            let hint = hint.map(|h| format!("; did you mean `{h}`?")).unwrap_or_default();
            return Err(D::Error::custom(format!("{}{hint}", e.code)));
        }
        Ok(key)
    }
}
