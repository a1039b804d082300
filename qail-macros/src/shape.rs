//! The Rust type of a record shape ([`Shape`]) the analyzer reports for a column: a
//! generated struct for a record, a `Vec` for an array, whichever way the struct decodes —
//! in binary ([`crate::nested`]) or from JSON with serde ([`crate::json`]).

use proc_macro2::{Ident, Span, TokenStream};
use qail_analyzer::{Shape, ShapeField};
use qail_schema::Snapshot;
use quote::quote;

/// What is wrong with a record and how to fix it.
pub(crate) type Failure = (String, String);

/// Builds the struct of one record shape (binary [`record`] or serde `json::object`).
pub(crate) type StructOf =
    fn(&Ident, &[ShapeField], &Snapshot, &mut Vec<TokenStream>) -> Result<TokenStream, Failure>;

/// The Rust type of a shape: the struct `name` built by `struct_of` for a record (its items
/// appended to `items`), a `Vec` of the element's type for an array.
pub(crate) fn shape_type(
    shape: &Shape,
    name: &str,
    snapshot: &Snapshot,
    items: &mut Vec<TokenStream>,
    struct_of: StructOf,
) -> Result<TokenStream, Failure> {
    match shape {
        Shape::Record(fields) => {
            let ident = Ident::new(name, Span::call_site());
            let item = struct_of(&ident, fields, snapshot, items)?;
            items.push(item);
            Ok(quote!(#ident))
        }
        Shape::Array {
            element,
            nullable_elements,
        } => {
            let inner = shape_type(element, name, snapshot, items, struct_of)?;
            Ok(if *nullable_elements {
                quote!(::std::vec::Vec<::core::option::Option<#inner>>)
            } else {
                quote!(::std::vec::Vec<#inner>)
            })
        }
    }
}
