//! The plugin registry: maps a plugin's RON name to its config type, so a scenario selects a NIC
//! by writing `nic: RoceNic((...))` and a research fork adds its own NIC by registering a name,
//! without touching the scenario types. An unknown name is an error that lists the known ones.
//!
//! A `Selection<dyn T>` field deserializes from `Name((...))`: the name picks a registered entry,
//! whose config type deserializes the inner value (through `erased-serde`, so entries can live in
//! any crate) and comes back as a `Box<dyn T>`.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::RwLock;

type Ctor<T> = fn(&mut dyn erased_serde::Deserializer) -> Result<Box<T>, erased_serde::Error>;

/// The entries of one kind of plugin (NICs, applications...).
pub struct Registry<T: ?Sized + 'static> {
    kind: &'static str,
    entries: RwLock<Vec<(&'static str, Ctor<T>)>>,
    names: RwLock<&'static [&'static str]>,
}

impl<T: ?Sized + 'static> Registry<T> {
    /// An empty registry; `kind` names it in messages (`NicModel`).
    pub const fn new(kind: &'static str) -> Self {
        Registry {
            kind,
            entries: RwLock::new(Vec::new()),
            names: RwLock::new(&[]),
        }
    }

    /// Registers `name` for config type `C`; a second registration of a name replaces the first
    /// (a fork overriding a built-in model).
    pub fn register<C>(&self, name: &'static str)
    where
        C: for<'de> Deserialize<'de> + Choice<T> + 'static,
    {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        entries.retain(|(n, _)| *n != name);
        entries.push((name, ctor::<C, T>));
        let names: Vec<&'static str> = entries.iter().map(|e| e.0).collect();
        // Leaked once per registration: serde wants `&'static [&'static str]` for its messages.
        *self.names.write().unwrap_or_else(|e| e.into_inner()) = Box::leak(names.into_boxed_slice());
    }

    /// The registered names, in registration order.
    pub fn names(&self) -> &'static [&'static str] {
        *self.names.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// Deserializes the variant `name` of an enum being read (its `Name((...))` body) into the
    /// registered config, for a field type that reads its own variants (one that also takes a
    /// bare `None`, say). An unknown name lists the known ones.
    pub fn select<'de, A: VariantAccess<'de>>(&self, name: &str, variant: A) -> Result<Selection<T>, A::Error> {
        let Some(ctor) = self.find(name) else {
            return Err(de::Error::unknown_variant(name, self.names()));
        };
        let static_name = self.names().iter().copied().find(|n| *n == name).unwrap_or("?");
        let value = variant.newtype_variant_seed(CtorSeed(ctor))?;
        Ok(Selection {
            name: static_name,
            value,
        })
    }

    fn find(&self, name: &str) -> Option<Ctor<T>> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|e| e.0 == name)
            .map(|e| e.1)
    }
}

/// A config type that becomes a `Box<T>` (for example `Box<dyn NicModel>`).
pub trait Choice<T: ?Sized>: Sized {
    /// The config as the registry's trait object.
    fn boxed(self) -> Box<T>;
}

fn ctor<C, T: ?Sized + 'static>(d: &mut dyn erased_serde::Deserializer) -> Result<Box<T>, erased_serde::Error>
where
    C: for<'de> Deserialize<'de> + Choice<T> + 'static,
{
    erased_serde::deserialize::<C>(d).map(C::boxed)
}

/// Implemented by the trait object type a registry produces, to find its registry.
pub trait Registered: 'static {
    /// The registry holding this trait's implementations.
    fn registry() -> &'static Registry<Self>;
}

/// A registered plugin chosen by name in RON: `Name((...))`.
pub struct Selection<T: ?Sized> {
    /// The name it was chosen by.
    pub name: &'static str,
    /// Its config, read from the RON.
    pub value: Box<T>,
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Selection<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({:?})", self.name, self.value)
    }
}

impl<'de, T: ?Sized + Registered> Deserialize<'de> for Selection<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let reg = T::registry();
        d.deserialize_enum(reg.kind, reg.names(), SelectionVisitor::<T>(std::marker::PhantomData))
    }
}

impl<T: ?Sized> Serialize for Selection<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

struct SelectionVisitor<T: ?Sized>(std::marker::PhantomData<Box<T>>);

impl<'de, T: ?Sized + Registered> Visitor<'de> for SelectionVisitor<T> {
    type Value = Selection<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let reg = T::registry();
        write!(
            f,
            "a {} written as Name((...)), one of: {}",
            reg.kind,
            reg.names().join(", ")
        )
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        let reg = T::registry();
        let (VariantName(name), variant): (VariantName, A::Variant) = data.variant()?;
        reg.select(&name, variant)
    }
}

/// A variant's name, read as an identifier (ron will not read a bare name as a string).
pub struct VariantName(pub String);

impl<'de> Deserialize<'de> for VariantName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = VariantName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a plugin name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VariantName, E> {
                Ok(VariantName(v.to_string()))
            }
        }
        d.deserialize_identifier(V)
    }
}

struct CtorSeed<T: ?Sized + 'static>(Ctor<T>);

impl<'de, T: ?Sized + 'static> DeserializeSeed<'de> for CtorSeed<T> {
    type Value = Box<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Box<T>, D::Error> {
        let mut erased = <dyn erased_serde::Deserializer>::erase(d);
        (self.0)(&mut erased).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    trait Shape: fmt::Debug {
        fn area(&self) -> f64;
    }
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Square {
        side: f64,
    }
    impl Shape for Square {
        fn area(&self) -> f64 {
            self.side * self.side
        }
    }
    impl Choice<dyn Shape> for Square {
        fn boxed(self) -> Box<dyn Shape> {
            Box::new(self)
        }
    }
    static SHAPES: Registry<dyn Shape> = Registry::new("shape");
    impl Registered for dyn Shape {
        fn registry() -> &'static Registry<dyn Shape> {
            &SHAPES
        }
    }
    #[derive(Debug, Deserialize)]
    struct Scene {
        shape: Selection<dyn Shape>,
    }

    #[test]
    fn selects_by_name_and_lists_known_names() {
        SHAPES.register::<Square>("Square");
        let s: Scene = ron::from_str("(shape: Square((side: 3.0)))").unwrap();
        assert_eq!(s.shape.name, "Square");
        assert_eq!(s.shape.value.area(), 9.0);
        let e = ron::from_str::<Scene>("(shape: Circle((r: 1.0)))")
            .unwrap_err()
            .to_string();
        assert!(e.contains("Circle") && e.contains("Square"), "{e}");
        let e = ron::from_str::<Scene>("(shape: Square((sides: 3.0)))")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sides"), "{e}");
    }
}
