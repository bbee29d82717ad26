//! The RON shape of a config type, read from its `Deserialize` impl rather than from a sample
//! value: a deserializer that answers nothing, only records what the type asks for. A derived
//! struct asks `deserialize_struct` with every field name it accepts (renamed, optional and
//! skipped-when-serializing ones included); an enum asks `deserialize_enum` with its variant
//! names, and then, given a variant index, says whether that variant is a unit, a newtype or a
//! struct with which fields. The hand-written `TopologyConfig` impl is read the same way, so a
//! field added anywhere shows up here without the test naming it.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, VariantAccess, Visitor};
use serde::forward_to_deserialize_any;

type Error = de::value::Error;

/// What a type asks of its deserializer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    Struct {
        name: &'static str,
        fields: &'static [&'static str],
    },
    Enum {
        name: &'static str,
        variants: Vec<(&'static str, Variant)>,
    },
    /// Anything else (a number, a string, a sequence).
    Other,
}

/// The form of one enum variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Variant {
    Unit,
    Newtype,
    Tuple,
    Struct(&'static [&'static str]),
    /// The variant's visitor asked for nothing (a type that refuses to be probed).
    Unknown,
}

impl Shape {
    /// The field names of a struct; panics on anything else, naming `what`.
    pub fn fields(&self, what: &str) -> &'static [&'static str] {
        match self {
            Shape::Struct { fields, .. } => fields,
            other => panic!("{what} does not deserialize as a struct: {other:?}"),
        }
    }

    /// The variant names of an enum; panics on anything else.
    pub fn variant_names(&self, what: &str) -> Vec<&'static str> {
        match self {
            Shape::Enum { variants, .. } => variants.iter().map(|v| v.0).collect(),
            other => panic!("{what} does not deserialize as an enum: {other:?}"),
        }
    }

    /// The fields of struct variant `variant`; panics if there is none.
    pub fn variant_fields(&self, variant: &str) -> &'static [&'static str] {
        match self {
            Shape::Enum { variants, .. } => match variants.iter().find(|v| v.0 == variant) {
                Some((_, Variant::Struct(fields))) => fields,
                other => panic!("variant {variant} is not a struct variant: {other:?}"),
            },
            other => panic!("not an enum: {other:?}"),
        }
    }
}

/// The shape of `T`.
pub fn shape<T: de::DeserializeOwned>() -> Shape {
    let mut seen = Seen::default();
    let _ = T::deserialize(Probe {
        seen: &mut seen,
        pick: None,
    });
    match seen.top {
        Some(Top::Struct(name, fields)) => Shape::Struct { name, fields },
        Some(Top::Enum(name, names)) => {
            let variants = (0..names.len() as u32)
                .map(|i| {
                    let mut seen = Seen::default();
                    let _ = T::deserialize(Probe {
                        seen: &mut seen,
                        pick: Some(i),
                    });
                    (names[i as usize], seen.variant.unwrap_or(Variant::Unknown))
                })
                .collect();
            Shape::Enum { name, variants }
        }
        None => Shape::Other,
    }
}

enum Top {
    Struct(&'static str, &'static [&'static str]),
    Enum(&'static str, &'static [&'static str]),
}

#[derive(Default)]
struct Seen {
    top: Option<Top>,
    variant: Option<Variant>,
}

/// The recording deserializer. With `pick`, an enum is entered at that variant index.
struct Probe<'a> {
    seen: &'a mut Seen,
    pick: Option<u32>,
}

fn stop() -> Error {
    de::Error::custom("shape probe: nothing to read")
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(stop())
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        self.seen.top.get_or_insert(Top::Struct(name, fields));
        Err(stop())
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.seen.top.get_or_insert(Top::Enum(name, variants));
        match self.pick {
            Some(index) => visitor.visit_enum(Pick { seen: self.seen, index }),
            None => Err(stop()),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// An enum entered at variant `index`.
struct Pick<'a> {
    seen: &'a mut Seen,
    index: u32,
}

impl<'de, 'a> EnumAccess<'de> for Pick<'a> {
    type Error = Error;
    type Variant = Pick<'a>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Pick<'a>), Error> {
        let tag = seed.deserialize(IntoDeserializer::<Error>::into_deserializer(self.index))?;
        Ok((tag, self))
    }
}

impl<'de> VariantAccess<'de> for Pick<'_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        self.seen.variant = Some(Variant::Unit);
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, _: S) -> Result<S::Value, Error> {
        self.seen.variant = Some(Variant::Newtype);
        Err(stop())
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Error> {
        self.seen.variant = Some(Variant::Tuple);
        Err(stop())
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], _: V) -> Result<V::Value, Error> {
        self.seen.variant = Some(Variant::Struct(fields));
        Err(stop())
    }
}

#[test]
fn the_probe_reads_derived_and_hand_written_impls() {
    use models::topology::TopologyConfig;
    let star = shape::<TopologyConfig>().variant_fields("Star").to_vec();
    assert_eq!(star, ["hosts", "link_rate", "link_delay"]);
    let start = shape::<scala_rdma::config::StartType>().variant_names("StartType");
    assert_eq!(start, ["simultaneous", "uniform", "sequential"]);
    let pcie = shape::<models::pcie::PcieConfig>().fields("PcieConfig").to_vec();
    assert!(pcie.contains(&"MaxPayloadSize"), "{pcie:?}");
}
