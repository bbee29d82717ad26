//! `CongestionControl: None` or `CongestionControl: Name((...))`: a NIC config field that
//! selects a registered controller or none.

use super::{CONTROLLERS, CcModel, Feedback};
use engine::registry::{Selection, VariantName};
use engine::scenario::FieldError;
use serde::de::{EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The controller a NIC config selects; `None` (the default) is no congestion control.
#[derive(Default)]
pub struct CcChoice(pub Option<Selection<dyn CcModel>>);

impl CcChoice {
    /// The selected model, if any.
    pub fn model(&self) -> Option<&dyn CcModel> {
        self.0.as_ref().map(|s| &*s.value)
    }
    /// Its RON name (`None` when there is none).
    pub fn name(&self) -> &'static str {
        self.0.as_ref().map_or("None", |s| s.name)
    }
    /// The signals the selected controller needs (none without one).
    pub fn feedback(&self) -> Feedback {
        self.model().map_or(Feedback::default(), CcModel::feedback)
    }
    /// The selected model's checks; the field is relative to the selection.
    pub fn validate(&self) -> Result<(), FieldError> {
        self.model().map_or(Ok(()), CcModel::validate)
    }
}

impl Clone for CcChoice {
    fn clone(&self) -> Self {
        CcChoice(self.0.as_ref().map(|s| Selection {
            name: s.name,
            value: s.value.clone_box(),
        }))
    }
}

impl fmt::Debug for CcChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => f.write_str("None"),
            Some(s) => s.fmt(f),
        }
    }
}

/// Configs compare by what they print: a model's `Debug` shows all of its settings.
impl PartialEq for CcChoice {
    fn eq(&self, other: &Self) -> bool {
        format!("{self:?}") == format!("{other:?}")
    }
}

impl Serialize for CcChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for CcChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_enum("CongestionControl", CONTROLLERS.names(), ChoiceVisitor)
    }
}

struct ChoiceVisitor;

impl<'de> Visitor<'de> for ChoiceVisitor {
    type Value = CcChoice;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "None or a CongestionControl written as Name((...)), one of: {}",
            CONTROLLERS.names().join(", ")
        )
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<CcChoice, A::Error> {
        let (VariantName(name), variant): (VariantName, A::Variant) = data.variant()?;
        if name == "None" {
            variant.unit_variant()?;
            return Ok(CcChoice(None));
        }
        if !CONTROLLERS.contains(&name) {
            let known = std::iter::once("None").chain(CONTROLLERS.names().iter().copied());
            let known: Vec<String> = known.map(|n| format!("`{n}`")).collect();
            return Err(serde::de::Error::custom(format!(
                "unknown variant `{name}`, expected one of {}",
                known.join(", ")
            )));
        }
        CONTROLLERS.select(&name, variant).map(|s| CcChoice(Some(s)))
    }
}
