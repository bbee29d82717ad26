//! How `TopologyConfig` reads and writes: as a *struct variant*, `Star(hosts: 10)`, although in
//! Rust each variant holds a named struct. Derived serde would make them newtype variants, which
//! ron 0.12 reads only as `Star((hosts: 10))` unless the `unwrap_variant_newtypes` extension is
//! on, and the scenario loader leaves that extension off (with it on, every other newtype variant
//! in the file would have to drop its parentheses too). A struct variant reads the same with the
//! extension on or off.
//!
//! Each variant's fields are handed to the inner struct's derived `Deserialize` through
//! `MapAccessDeserializer`, so defaults and `deny_unknown_fields` stay where they are declared;
//! `Serialize` lists the fields by hand, which the round-trip test in `config::tests` pins.

use super::{ExplicitTopology, FatTreeTopology, LeafSpineTopology, StarTopology, TopologyConfig};
use serde::de::{self, Deserializer, EnumAccess, MapAccess, VariantAccess, Visitor};
use serde::ser::{SerializeStructVariant, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::marker::PhantomData;

const VARIANTS: &[&str] = &["Explicit", "Star", "LeafSpine", "FatTree"];

/// Field names of each variant, as `struct_variant` wants them (the derived lists are private).
pub(super) const EXPLICIT_FIELDS: &[&str] = &["nodes", "links", "link_rate", "link_delay"];
pub(super) const STAR_FIELDS: &[&str] = &["hosts", "link_rate", "link_delay"];
pub(super) const LEAF_SPINE_FIELDS: &[&str] = &[
    "leaves",
    "spines",
    "hosts_per_leaf",
    "link_rate",
    "link_delay",
    "host_link",
    "spine_link",
];
pub(super) const FAT_TREE_FIELDS: &[&str] = &[
    "k",
    "link_rate",
    "link_delay",
    "host_link",
    "aggregation_link",
    "core_link",
];

/// The variant names; serde's messages name the enum, so it is called what a user wrote.
#[derive(Deserialize)]
#[serde(rename = "Topology")]
enum Kind {
    Explicit,
    Star,
    LeafSpine,
    FatTree,
}

impl<'de> Deserialize<'de> for TopologyConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_enum("TopologyConfig", VARIANTS, TopologyVisitor)
    }
}

struct TopologyVisitor;

impl<'de> Visitor<'de> for TopologyVisitor {
    type Value = TopologyConfig;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a topology: Explicit(..), Star(..), LeafSpine(..) or FatTree(..)")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<TopologyConfig, A::Error> {
        let (kind, variant) = data.variant::<Kind>()?;
        Ok(match kind {
            Kind::Explicit => TopologyConfig::Explicit(variant.struct_variant(EXPLICIT_FIELDS, Fields::new())?),
            Kind::Star => TopologyConfig::Star(variant.struct_variant(STAR_FIELDS, Fields::new())?),
            Kind::LeafSpine => TopologyConfig::LeafSpine(variant.struct_variant(LEAF_SPINE_FIELDS, Fields::new())?),
            Kind::FatTree => TopologyConfig::FatTree(variant.struct_variant(FAT_TREE_FIELDS, Fields::new())?),
        })
    }
}

/// Reads a variant's fields into the struct `T` with `T`'s own derived `Deserialize`.
struct Fields<T>(PhantomData<T>);

impl<T> Fields<T> {
    fn new() -> Self {
        Fields(PhantomData)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the topology's fields in parentheses")
    }

    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

/// Writes `Some` fields (as options, so plain ron gets its `Some(..)`) and skips `None` ones, as
/// the structs' `skip_serializing_if` does.
fn optional<V: SerializeStructVariant, T: Serialize>(
    v: &mut V,
    name: &'static str,
    value: &Option<T>,
) -> Result<(), V::Error> {
    match value {
        Some(_) => v.serialize_field(name, value),
        None => v.skip_field(name),
    }
}

impl Serialize for TopologyConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const NAME: &str = "TopologyConfig";
        match self {
            TopologyConfig::Explicit(ExplicitTopology {
                nodes,
                links,
                link_rate,
                link_delay,
            }) => {
                let mut v = s.serialize_struct_variant(NAME, 0, "Explicit", EXPLICIT_FIELDS.len())?;
                v.serialize_field("nodes", nodes)?;
                v.serialize_field("links", links)?;
                v.serialize_field("link_rate", link_rate)?;
                v.serialize_field("link_delay", link_delay)?;
                v.end()
            }
            TopologyConfig::Star(StarTopology {
                hosts,
                link_rate,
                link_delay,
            }) => {
                let mut v = s.serialize_struct_variant(NAME, 1, "Star", STAR_FIELDS.len())?;
                v.serialize_field("hosts", hosts)?;
                v.serialize_field("link_rate", link_rate)?;
                v.serialize_field("link_delay", link_delay)?;
                v.end()
            }
            TopologyConfig::LeafSpine(LeafSpineTopology {
                leaves,
                spines,
                hosts_per_leaf,
                link_rate,
                link_delay,
                host_link,
                spine_link,
            }) => {
                let mut v = s.serialize_struct_variant(NAME, 2, "LeafSpine", LEAF_SPINE_FIELDS.len())?;
                v.serialize_field("leaves", leaves)?;
                v.serialize_field("spines", spines)?;
                v.serialize_field("hosts_per_leaf", hosts_per_leaf)?;
                v.serialize_field("link_rate", link_rate)?;
                v.serialize_field("link_delay", link_delay)?;
                optional(&mut v, "host_link", host_link)?;
                optional(&mut v, "spine_link", spine_link)?;
                v.end()
            }
            TopologyConfig::FatTree(FatTreeTopology {
                k,
                link_rate,
                link_delay,
                host_link,
                aggregation_link,
                core_link,
            }) => {
                let mut v = s.serialize_struct_variant(NAME, 3, "FatTree", FAT_TREE_FIELDS.len())?;
                v.serialize_field("k", k)?;
                v.serialize_field("link_rate", link_rate)?;
                v.serialize_field("link_delay", link_delay)?;
                optional(&mut v, "host_link", host_link)?;
                optional(&mut v, "aggregation_link", aggregation_link)?;
                optional(&mut v, "core_link", core_link)?;
                v.end()
            }
        }
    }
}
