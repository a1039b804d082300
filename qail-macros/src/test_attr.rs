//! `#[qail::test]`: an `async fn` taking a `Pool`, a `Connection` or a URL `String` becomes a
//! `#[test]` that runs it on a database of its own (qail-migrate's `test_db::run`).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, LitStr};

/// The attribute's arguments: `fixtures("users", "orders")`.
#[derive(Default)]
pub(crate) struct TestArgs {
    fixtures: Vec<LitStr>,
}

impl TestArgs {
    pub(crate) fn parse(args: TokenStream) -> syn::Result<TestArgs> {
        let mut parsed = TestArgs::default();
        if args.is_empty() {
            return Ok(parsed);
        }
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("fixtures") {
                let content;
                syn::parenthesized!(content in meta.input);
                let names = content
                    .parse_terminated(<LitStr as syn::parse::Parse>::parse, syn::Token![,])?;
                parsed.fixtures.extend(names);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown argument of #[qail::test]; the one argument is \
                     `fixtures(\"name\", …)`, files fixtures/<name>.sql",
                ))
            }
        });
        syn::parse::Parser::parse2(parser, args)?;
        Ok(parsed)
    }
}

/// The `#[test]` function running `item` on a test database.
pub(crate) fn expand(args: &TestArgs, item: &ItemFn) -> syn::Result<TokenStream> {
    let sig = &item.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "#[qail::test] runs an `async fn`: add `async`",
        ));
    }
    if sig.inputs.len() > 1 {
        return Err(syn::Error::new(
            sig.inputs.span(),
            "#[qail::test] passes one argument, a `qail::Pool`, a `qail::Connection` or the \
             database's URL as a `String`: remove the others",
        ));
    }
    let open = match sig.inputs.first() {
        None => quote!(),
        Some(FnArg::Receiver(r)) => {
            return Err(syn::Error::new(
                r.span(),
                "#[qail::test] runs a free function: remove `self`",
            ));
        }
        Some(FnArg::Typed(arg)) => {
            let ty = &arg.ty;
            quote_spanned!(ty.span()=>
                <#ty as ::qail::__private::test_db::FromTestDb>::from_test_db(&db).await
            )
        }
    };
    let name = &sig.ident;
    let attrs = &item.attrs;
    let vis = &item.vis;
    let fixtures = &args.fixtures;
    Ok(quote! {
        #[::core::prelude::v1::test]
        #(#attrs)*
        #vis fn #name() {
            #item
            ::qail::__private::test_db::run(
                ::qail::__private::test_db::Args {
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    fixtures: &[#(#fixtures),*],
                    name: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#name)),
                },
                |db| async move { #name(#open).await },
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixtures_are_read_in_order() {
        let args = TestArgs::parse(quote!(fixtures("users", "orders"))).unwrap();
        let names: Vec<_> = args.fixtures.iter().map(LitStr::value).collect();
        assert_eq!(names, ["users", "orders"]);
        assert!(TestArgs::parse(quote!(fixture("x"))).is_err());
    }

    #[test]
    fn an_async_fn_becomes_a_test_on_its_database() {
        let item: ItemFn = syn::parse2(quote!(
            async fn t(pool: qail::Pool) {}
        ))
        .unwrap();
        let out = expand(&TestArgs::default(), &item).unwrap().to_string();
        assert!(out.contains(":: core :: prelude :: v1 :: test"), "{out}");
        assert!(out.contains("FromTestDb"), "{out}");
        let sync: ItemFn = syn::parse2(quote!(
            fn t(pool: qail::Pool) {}
        ))
        .unwrap();
        let err = expand(&TestArgs::default(), &sync).unwrap_err();
        assert!(err.to_string().contains("add `async`"));
    }
}
