//! Whether a configuration can be written as TOML, whose integers are signed
//! 64-bit, found by walking its serialization without building anything:
//! [`SsdConfig::check_writable`](super::SsdConfig::check_writable) runs for
//! every configuration validated (every point a sweep builds or lists), and
//! almost every one passes. The walk stops at the first integer above
//! `i64::MAX`, or at anything `serde_json::to_value` might refuse; the caller
//! then looks again through `to_value`, for the error as it always was (the
//! dotted path of the first such integer in sorted key order).

use serde::ser::{self, Impossible, Serialize, Serializer};
use std::fmt;

/// Whether `v` serializes with no integer above `i64::MAX` and nothing
/// unusual (a map key other than a string, a character or an integer; a
/// 128-bit integer beyond 64 bits; an error of its own `Serialize`).
pub(super) fn fits<T: Serialize + ?Sized>(v: &T) -> bool {
    v.serialize(Walk).is_ok()
}

/// The walk stopped: something to look at through `serde_json::to_value`.
#[derive(Debug)]
pub(super) struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not writable as TOML as it is")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// A value: its integers checked, its parts walked.
struct Walk;

/// A map key: the scalars `serde_json` takes as keys, checked as nothing
/// (a key is text in the echo); anything else stops the walk.
struct Key;

type Res = Result<(), Stop>;

impl Serializer for Walk {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Walk;
    type SerializeTuple = Walk;
    type SerializeTupleStruct = Walk;
    type SerializeTupleVariant = Walk;
    type SerializeMap = Walk;
    type SerializeStruct = Walk;
    type SerializeStructVariant = Walk;

    /// The units give their plain numbers ([`ssd_core::units`]), formatting
    /// no text: the walk looks at integers only, and a unit's text is no
    /// integer in the echo. (A size or duration beyond `i64::MAX` stops the
    /// walk, for the full look to tell it is fine.)
    fn is_human_readable(&self) -> bool {
        false
    }

    fn serialize_bool(self, _: bool) -> Res {
        Ok(())
    }
    fn serialize_i8(self, _: i8) -> Res {
        Ok(())
    }
    fn serialize_i16(self, _: i16) -> Res {
        Ok(())
    }
    fn serialize_i32(self, _: i32) -> Res {
        Ok(())
    }
    fn serialize_i64(self, _: i64) -> Res {
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Res {
        if i64::try_from(v).is_ok() {
            Ok(())
        } else {
            Err(Stop)
        }
    }
    fn serialize_u8(self, _: u8) -> Res {
        Ok(())
    }
    fn serialize_u16(self, _: u16) -> Res {
        Ok(())
    }
    fn serialize_u32(self, _: u32) -> Res {
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Res {
        if v <= i64::MAX as u64 {
            Ok(())
        } else {
            Err(Stop)
        }
    }
    fn serialize_u128(self, v: u128) -> Res {
        if v <= i64::MAX as u128 {
            Ok(())
        } else {
            Err(Stop)
        }
    }
    fn serialize_f32(self, _: f32) -> Res {
        Ok(())
    }
    fn serialize_f64(self, _: f64) -> Res {
        Ok(())
    }
    fn serialize_char(self, _: char) -> Res {
        Ok(())
    }
    fn serialize_str(self, _: &str) -> Res {
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Res {
        Ok(())
    }
    fn serialize_none(self) -> Res {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn serialize_unit(self) -> Res {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Res {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Res {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> Res {
        v.serialize(Walk)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Walk, Stop> {
        Ok(Walk)
    }
    fn serialize_tuple(self, _: usize) -> Result<Walk, Stop> {
        Ok(Walk)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Walk, Stop> {
        Ok(Walk)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Walk, Stop> {
        Ok(Walk)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Walk, Stop> {
        Ok(Walk)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Walk, Stop> {
        Ok(Walk)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Walk, Stop> {
        Ok(Walk)
    }
}

impl ser::SerializeSeq for Walk {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn end(self) -> Res {
        Ok(())
    }
}

impl ser::SerializeTuple for Walk {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn end(self) -> Res {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Walk {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn end(self) -> Res {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Walk {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn end(self) -> Res {
        Ok(())
    }
}

impl ser::SerializeMap for Walk {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Res {
        k.serialize(Key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn end(self) -> Res {
        Ok(())
    }
}

impl ser::SerializeStruct for Walk {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn end(self) -> Res {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Walk {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, v: &T) -> Res {
        v.serialize(Walk)
    }
    fn end(self) -> Res {
        Ok(())
    }
}

impl Serializer for Key {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Impossible<(), Stop>;
    type SerializeTuple = Impossible<(), Stop>;
    type SerializeTupleStruct = Impossible<(), Stop>;
    type SerializeTupleVariant = Impossible<(), Stop>;
    type SerializeMap = Impossible<(), Stop>;
    type SerializeStruct = Impossible<(), Stop>;
    type SerializeStructVariant = Impossible<(), Stop>;

    fn serialize_bool(self, _: bool) -> Res {
        Err(Stop)
    }
    fn serialize_i8(self, _: i8) -> Res {
        Ok(())
    }
    fn serialize_i16(self, _: i16) -> Res {
        Ok(())
    }
    fn serialize_i32(self, _: i32) -> Res {
        Ok(())
    }
    fn serialize_i64(self, _: i64) -> Res {
        Ok(())
    }
    fn serialize_u8(self, _: u8) -> Res {
        Ok(())
    }
    fn serialize_u16(self, _: u16) -> Res {
        Ok(())
    }
    fn serialize_u32(self, _: u32) -> Res {
        Ok(())
    }
    fn serialize_u64(self, _: u64) -> Res {
        Ok(())
    }
    fn serialize_f32(self, _: f32) -> Res {
        Err(Stop)
    }
    fn serialize_f64(self, _: f64) -> Res {
        Err(Stop)
    }
    fn serialize_char(self, _: char) -> Res {
        Ok(())
    }
    fn serialize_str(self, _: &str) -> Res {
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Res {
        Err(Stop)
    }
    fn serialize_none(self) -> Res {
        Err(Stop)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Res {
        Err(Stop)
    }
    fn serialize_unit(self) -> Res {
        Err(Stop)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Res {
        Err(Stop)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Res {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Res {
        v.serialize(Key)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Res {
        Err(Stop)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Stop> {
        Err(Stop)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Stop> {
        Err(Stop)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Stop> {
        Err(Stop)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Stop> {
        Err(Stop)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Stop> {
        Err(Stop)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Stop> {
        Err(Stop)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Stop> {
        Err(Stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize)]
    struct Inner {
        a: u64,
        b: Option<u128>,
        m: BTreeMap<String, i64>,
    }

    #[test]
    fn integers_beyond_i64_stop_the_walk_wherever_they_are() {
        let ok = Inner {
            a: i64::MAX as u64,
            b: Some(5),
            m: BTreeMap::from([("k".to_string(), i64::MIN)]),
        };
        assert!(fits(&ok));
        assert!(fits(&vec![Some(ok)]));
        let big = Inner {
            a: i64::MAX as u64 + 1,
            b: None,
            m: BTreeMap::new(),
        };
        assert!(!fits(&vec![None, Some(big)]));
        let big128 = Inner {
            a: 0,
            b: Some(1 << 64),
            m: BTreeMap::new(),
        };
        assert!(!fits(&big128));
        // A key serde_json could refuse is looked at again.
        assert!(!fits(&BTreeMap::from([(vec![1u8], 1)])));
        assert!(fits(&BTreeMap::from([(u64::MAX, 1)])));
        // A size beyond i64::MAX is written as text: the walk stops, and
        // the full look finds nothing wrong.
        let mut c = crate::config::SsdConfig::default();
        assert!(fits(&c));
        c.workload.size = Some(ssd_core::units::Size(u64::MAX));
        assert!(!fits(&c));
        c.check_writable().unwrap();
    }
}
