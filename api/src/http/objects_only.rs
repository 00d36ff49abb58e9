//! A JSON document read as the OpenAPI document describes it: serde's
//! derived structs also accept an array of their fields in declaration
//! order (`["web", {"region": "eu"}]` for `{"name": …, "spec": …}`), which no
//! client is promised and which lets one body mean two things. [`ObjectsOnly`]
//! deserializes a [`serde_json::Value`] like the value itself does, except
//! that a struct, at any depth, must be a JSON object.

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, IntoDeserializer, Unexpected, Visitor};
use serde_json::{Error, Value};

/// A parsed document whose structs, at every depth, must be objects.
pub struct ObjectsOnly(pub Value);

impl<'de> IntoDeserializer<'de, Error> for ObjectsOnly {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// Each member of an object, each wrapped again.
fn members(map: serde_json::Map<String, Value>) -> impl Iterator<Item = (String, ObjectsOnly)> {
    map.into_iter().map(|(key, value)| (key, ObjectsOnly(value)))
}

fn visit_object<'de, V: Visitor<'de>>(map: serde_json::Map<String, Value>, visitor: V) -> Result<V::Value, Error> {
    let mut access = MapDeserializer::new(members(map));
    let value = visitor.visit_map(&mut access)?;
    access.end()?;
    Ok(value)
}

fn visit_array<'de, V: Visitor<'de>>(items: Vec<Value>, visitor: V) -> Result<V::Value, Error> {
    let mut access = SeqDeserializer::new(items.into_iter().map(ObjectsOnly));
    let value = visitor.visit_seq(&mut access)?;
    access.end()?;
    Ok(value)
}

impl<'de> de::Deserializer<'de> for ObjectsOnly {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            Value::Array(items) => visit_array(items, visitor),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            Value::Array(_) => Err(de::Error::invalid_type(Unexpected::Seq, &"an object")),
            other => other.deserialize_struct(name, fields, visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            other => other.deserialize_map(visitor),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => other.deserialize_seq(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => other.deserialize_tuple(len, visitor),
        }
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => other.deserialize_tuple_struct(name, len, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(ObjectsOnly(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        region: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        name: String,
        spec: Inner,
        #[serde(default)]
        tags: Vec<Inner>,
        extra: Option<Inner>,
    }

    fn read(json: &str) -> Result<Outer, Error> {
        Outer::deserialize(ObjectsOnly(serde_json::from_str(json).unwrap()))
    }

    #[test]
    fn objects_read_as_they_always_did() {
        let read = read(r#"{"name":"a","spec":{"region":"eu"},"tags":[{"region":"us"}],"extra":null}"#).unwrap();
        assert_eq!(read.spec.region, "eu");
        assert_eq!(read.tags, [Inner { region: "us".into() }]);
        assert_eq!(read.extra, None);
    }

    #[test]
    fn a_struct_given_as_an_array_is_refused_at_any_depth() {
        for json in [
            r#"["a", {"region":"eu"}]"#,
            r#"{"name":"a","spec":["eu"]}"#,
            r#"{"name":"a","spec":{"region":"eu"},"tags":[["us"]]}"#,
            r#"{"name":"a","spec":{"region":"eu"},"extra":["us"]}"#,
        ] {
            let error = read(json).unwrap_err().to_string();
            assert!(error.contains("expected an object"), "{json}: {error}");
        }
    }
}
