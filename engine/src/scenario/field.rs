//! [`FieldError`]: what a config's own check returns, so the loader can point at the field at
//! fault (its line and column, or the `--set` that wrote it) rather than at the enclosing struct.

use std::fmt;

/// A value a config's check refuses: the dotted path of the field, relative to the config that
/// checked it (`EgressBufferManager.BufferSize` for the NIC), and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// `Ecn.Kmin`, `PoolAllocationVector[3]`: the loader prefixes the config's own place.
    pub field: String,
    /// What is wrong, without the field's name (Display adds it).
    pub message: String,
}

impl FieldError {
    /// An error at `field` saying `message`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same error one level down, as seen from a config that holds the checked one at
    /// `prefix` (`Pcie` + `MaxPayloadSize` = `Pcie.MaxPayloadSize`).
    pub fn under(self, prefix: &str) -> Self {
        let field = match (prefix.is_empty(), self.field.is_empty()) {
            (true, _) => self.field,
            (false, true) => prefix.to_owned(),
            (false, false) if self.field.starts_with('[') => format!("{prefix}{}", self.field),
            (false, false) => format!("{prefix}.{}", self.field),
        };
        FieldError { field, ..self }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_joins_paths_and_display_names_the_field() {
        let e = FieldError::new("MaxPayloadSize", "must be from 1 B to 4096 B").under("Pcie");
        assert_eq!(e.field, "Pcie.MaxPayloadSize");
        assert_eq!(e.to_string(), "Pcie.MaxPayloadSize: must be from 1 B to 4096 B");
        assert_eq!(FieldError::new("[3]", "x").under("faults").field, "faults[3]");
        assert_eq!(FieldError::new("", "x").under("nic").field, "nic");
        assert_eq!(FieldError::new("a", "x").under("").field, "a");
    }
}
