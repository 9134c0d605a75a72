//! The impl `#[derive(DeserializeIn)]` writes: a serde visitor per struct or variant
//! body that reads each field with a `Seed` of the scope (a `CapacitySeed` for
//! `#[scope(capacity = N)]` or `#[scope(extra = N)]`), and the impl of `DeserializeIn` that drives it
//! (`deserialize_struct`, `deserialize_tuple_struct`, `deserialize_enum`, ...). Enums
//! that are not externally tagged read a variant through `__Visitor::__variant(id,
//! deserializer)`, from the file (adjacently tagged) or from the main crate's buffered
//! `Content` (internally tagged, untagged, adjacently tagged with the content first).
//!
//! Invariant: the generated code names only `::scope_stack::serde::__private` paths (no
//! `serde` dependency is needed in the user's crate), and each helper item it declares
//! lives inside the generated function, so two derives never clash.
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{
    parse_quote, Data, DeriveInput, Fields, GenericParam, Generics, Ident, Lifetime, Member, Type,
};

use crate::attr::{self, Capacity, Case, Container};

/// The generated code's way into the main crate.
fn krate() -> TokenStream {
    quote!(::scope_stack::serde::__private)
}

/// One field as the generated code reads it.
struct FieldSpec {
    member: Member,
    ty: Type,
    /// Its name in the file (after `rename`/`rename_all`), plus aliases.
    name: String,
    aliases: Vec<String>,
    attrs: attr::Member,
}

/// What every visitor of one derive shares: the generics with the scope lifetime and
/// `__P`, the scope lifetime, and the type.
struct Ctx {
    s_lt: Lifetime,
    impl_generics: Generics,
    vis_generics: Generics,
    self_ty: TokenStream,
}

impl Ctx {
    /// `struct NAME<...> { scope: __P, _m: PhantomData<...> }` with the visitor generics.
    fn visitor_struct(&self, name: &Ident) -> TokenStream {
        let k = krate();
        let (g, _, w) = self.vis_generics.split_for_impl();
        let s = &self.s_lt;
        let self_ty = &self.self_ty;
        // `split_for_impl`'s first part prints the bounds, as a struct declaration wants.
        quote! {
            struct #name #g #w {
                scope: __P,
                _m: #k::PhantomData<fn() -> (&#s (), #self_ty)>,
            }
        }
    }

    /// `impl<'__de, ...> Visitor<'__de> for NAME<...>` header pieces.
    fn visitor_impl(&self, name: &Ident, body: TokenStream) -> TokenStream {
        let k = krate();
        let mut g = self.vis_generics.clone();
        g.params.insert(0, parse_quote!('__de));
        let (ig, _, _) = g.split_for_impl();
        let (_, tg, w) = self.vis_generics.split_for_impl();
        let self_ty = &self.self_ty;
        quote! {
            impl #ig #k::de::Visitor<'__de> for #name #tg #w {
                type Value = #self_ty;
                #body
            }
        }
    }
}

/// Expands the derive.
pub fn expand(input: DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let cont = attr::container(&input.attrs)?;
    let name = &input.ident;
    let s_lt = match input.generics.lifetimes().next() {
        Some(l) => l.lifetime.clone(),
        None => Lifetime::new("'__s", Span::call_site()),
    };
    let mut impl_generics = input.generics.clone();
    if input.generics.lifetimes().next().is_none() {
        impl_generics.params.insert(0, parse_quote!(#s_lt));
    }
    let type_params: Vec<Ident> = input
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(t.ident.clone()),
            _ => None,
        })
        .collect();
    {
        let wc = impl_generics.make_where_clause();
        for t in &type_params {
            wc.predicates
                .push(parse_quote!(#t: #k::DeserializeIn<#s_lt>));
        }
    }
    let mut vis_generics = impl_generics.clone();
    vis_generics
        .params
        .push(parse_quote!(__P: #k::Place<#s_lt> + ::core::marker::Copy));
    let (_, tg, _) = input.generics.split_for_impl();
    let self_ty = quote!(#name #tg);
    let ctx = Ctx {
        s_lt: s_lt.clone(),
        impl_generics,
        vis_generics,
        self_ty,
    };
    let file_name = cont.rename.clone().unwrap_or_else(|| name.to_string());

    let (items, drive, places) = match &input.data {
        Data::Struct(s) => {
            if let Some(span) = cont.repr_span {
                return Err(syn::Error::new(
                    span,
                    "DeserializeIn: `tag`, `content` and `untagged` apply to enums only",
                ));
            }
            let fields = specs(&s.fields, cont.rename_all)?;
            let vname = format_ident!("__Visitor");
            let ctor = quote!(#name);
            let (items, fields_const) = body_visitor(
                &ctx,
                &vname,
                &ctor,
                &s.fields,
                &fields,
                &cont,
                cont.default,
                "0",
                &format!("struct {name}"),
            )?;
            let visitor = quote!(#vname { scope: __scope, _m: #k::PhantomData });
            let drive = match &s.fields {
                Fields::Named(_) => quote! {
                    #k::de::Deserializer::deserialize_struct(__de, #file_name, #fields_const, #visitor)
                },
                Fields::Unnamed(u) if u.unnamed.len() == 1 => quote! {
                    #k::de::Deserializer::deserialize_newtype_struct(__de, #file_name, #visitor)
                },
                Fields::Unnamed(u) => {
                    let n = u.unnamed.len();
                    quote! {
                        #k::de::Deserializer::deserialize_tuple_struct(__de, #file_name, #n, #visitor)
                    }
                }
                Fields::Unit => quote! {
                    #k::de::Deserializer::deserialize_unit_struct(__de, #file_name, #visitor)
                },
            };
            (items, drive, places_of(&ctx, &fields))
        }
        Data::Enum(e) => enum_body(&ctx, name, &file_name, e, &cont)?,
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "DeserializeIn cannot be derived for a union",
            ))
        }
    };

    let (ig, _, wc) = ctx.impl_generics.split_for_impl();
    let self_ty = &ctx.self_ty;
    Ok(quote! {
        #[automatically_derived]
        impl #ig #k::DeserializeIn<#s_lt> for #self_ty #wc {
            const PLACES: bool = #places;
            fn deserialize_in<'__de, __P, __D>(
                __scope: __P,
                __de: __D,
            ) -> ::core::result::Result<Self, <__D as #k::de::Deserializer<'__de>>::Error>
            where
                __P: #k::Place<#s_lt> + ::core::marker::Copy,
                __D: #k::de::Deserializer<'__de>,
            {
                #items
                #drive
            }
        }
    })
}

/// `false || <F as DeserializeIn<'s>>::PLACES || ...` over the fields read with a seed.
fn places_of(ctx: &Ctx, fields: &[FieldSpec]) -> TokenStream {
    let k = krate();
    let s = &ctx.s_lt;
    let tys = fields
        .iter()
        .filter(|f| !f.attrs.skip && !f.attrs.with_serde)
        .map(|f| &f.ty);
    quote!(false #(|| <#tys as #k::DeserializeIn<#s>>::PLACES)*)
}

/// The seed that reads field `f` into `self.scope`: a `Seed`, or a `CapacitySeed` for
/// `#[scope(capacity = N)]` (`new`) or `#[scope(extra = N)]` (`extra`).
fn seed_of(f: &FieldSpec) -> TokenStream {
    let k = krate();
    let ty = &f.ty;
    match &f.attrs.capacity {
        Some(Capacity::Exactly(n)) => quote!(#k::CapacitySeed::<__P, #ty>::new(self.scope, #n)),
        Some(Capacity::Extra(n)) => quote!(#k::CapacitySeed::<__P, #ty>::extra(self.scope, #n)),
        None => quote!(#k::Seed::<__P, #ty>::new(self.scope)),
    }
}

/// The fields of a body with their file names.
fn specs(fields: &Fields, rename_all: Option<Case>) -> syn::Result<Vec<FieldSpec>> {
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let attrs = attr::member(&f.attrs)?;
        if let (Some(c), true) = (&attrs.capacity, attrs.with_serde) {
            return Err(syn::Error::new_spanned(
                c.expr(),
                format!(
                    "DeserializeIn: `{}` needs a field read with DeserializeIn, not `with_serde`",
                    c.name()
                ),
            ));
        }
        let member = match &f.ident {
            Some(id) => Member::Named(id.clone()),
            None => Member::Unnamed(i.into()),
        };
        let base = match &f.ident {
            Some(id) => {
                let s = id.to_string();
                s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
            }
            None => i.to_string(),
        };
        let name = match (&attrs.rename, rename_all) {
            (Some(r), _) => r.clone(),
            (None, Some(case)) if f.ident.is_some() => case.apply(&base, false),
            _ => base,
        };
        out.push(FieldSpec {
            member,
            ty: f.ty.clone(),
            name,
            aliases: attrs.aliases.clone(),
            attrs,
        });
    }
    Ok(out)
}

/// The identifier enum of a body's keys (or an enum's variants) and its `Deserialize`.
fn identifier(
    enum_name: &Ident,
    names: &[(Vec<String>, Ident)],
    list_const: &Ident,
    deny: bool,
    variants: bool,
) -> TokenStream {
    let k = krate();
    let idents: Vec<&Ident> = names.iter().map(|(_, i)| i).collect();
    let str_arms = names
        .iter()
        .map(|(ns, i)| quote!(#(#ns)|* => ::core::result::Result::Ok(#enum_name::#i),));
    let idx_arms = names.iter().enumerate().map(|(n, (_, i))| {
        let n = n as u64;
        quote!(#n => ::core::result::Result::Ok(#enum_name::#i),)
    });
    let (ignore_variant, unknown_str, unknown_idx) = if variants {
        (
            quote!(),
            quote!(::core::result::Result::Err(#k::de::Error::unknown_variant(__v, #list_const))),
            quote!(::core::result::Result::Err(#k::de::Error::invalid_value(
                #k::de::Unexpected::Unsigned(__v), &"a variant index"))),
        )
    } else if deny {
        (
            quote!(),
            quote!(::core::result::Result::Err(#k::de::Error::unknown_field(__v, #list_const))),
            quote!(::core::result::Result::Err(#k::de::Error::invalid_value(
                #k::de::Unexpected::Unsigned(__v), &"a field index"))),
        )
    } else {
        (
            quote!(__ignore,),
            quote!(::core::result::Result::Ok(#enum_name::__ignore)),
            quote!(::core::result::Result::Ok(#enum_name::__ignore)),
        )
    };
    let what = if variants {
        "a variant name"
    } else {
        "a field name"
    };
    quote! {
        #[allow(non_camel_case_types)]
        enum #enum_name { #(#idents,)* #ignore_variant }
        impl<'__de> #k::de::Deserialize<'__de> for #enum_name {
            fn deserialize<__D2: #k::de::Deserializer<'__de>>(__d: __D2)
                -> ::core::result::Result<Self, __D2::Error>
            {
                struct __Ident;
                impl<'__de> #k::de::Visitor<'__de> for __Ident {
                    type Value = #enum_name;
                    fn expecting(&self, __f: &mut #k::fmt::Formatter<'_>) -> #k::fmt::Result {
                        __f.write_str(#what)
                    }
                    fn visit_str<__E: #k::de::Error>(self, __v: &str) -> ::core::result::Result<#enum_name, __E> {
                        match __v { #(#str_arms)* _ => #unknown_str }
                    }
                    fn visit_bytes<__E: #k::de::Error>(self, __b: &[u8]) -> ::core::result::Result<#enum_name, __E> {
                        match ::core::str::from_utf8(__b) {
                            ::core::result::Result::Ok(__v) => self.visit_str(__v),
                            ::core::result::Result::Err(_) => ::core::result::Result::Err(
                                #k::de::Error::invalid_value(#k::de::Unexpected::Bytes(__b), &self)),
                        }
                    }
                    fn visit_u64<__E: #k::de::Error>(self, __v: u64) -> ::core::result::Result<#enum_name, __E> {
                        match __v { #(#idx_arms)* _ => #unknown_idx }
                    }
                }
                #k::de::Deserializer::deserialize_identifier(__d, __Ident)
            }
        }
    }
}

/// A visitor for one body (a struct, or one variant): its helper items, and the name of
/// its list of field names.
#[allow(clippy::too_many_arguments)]
fn body_visitor(
    ctx: &Ctx,
    vname: &Ident,
    ctor: &TokenStream,
    shape: &Fields,
    fields: &[FieldSpec],
    cont: &Container,
    container_default: bool,
    tag: &str,
    expecting: &str,
) -> syn::Result<(TokenStream, Ident)> {
    let k = krate();
    let s = &ctx.s_lt;
    let self_ty = &ctx.self_ty;
    let fields_const = format_ident!("__FIELDS{}", tag);
    let field_enum = format_ident!("__Field{}", tag);
    let read: Vec<&FieldSpec> = fields.iter().filter(|f| !f.attrs.skip).collect();
    let vars: Vec<Ident> = (0..fields.len())
        .map(|i| format_ident!("__v{}", i))
        .collect();
    let var_of = |f: &FieldSpec| -> Ident {
        let i = fields
            .iter()
            .position(|g| std::ptr::eq(g, f))
            .expect("a field of this body");
        vars[i].clone()
    };
    let names: Vec<&String> = read.iter().map(|f| &f.name).collect();
    let container_default_stmt = if container_default {
        quote!(let __default: #self_ty = ::core::default::Default::default();)
    } else {
        quote!()
    };
    let default_of = |f: &FieldSpec| -> Option<TokenStream> {
        let m = &f.member;
        match &f.attrs.default {
            attr::Default::Trait => Some(quote!(::core::default::Default::default())),
            attr::Default::Path(p) => Some(quote!(#p())),
            attr::Default::None if container_default => Some(quote!(__default.#m)),
            attr::Default::None => None,
        }
    };
    // Skipped fields: their default.
    let skipped = fields.iter().filter(|f| f.attrs.skip).map(|f| {
        let v = var_of(f);
        let d = default_of(f).unwrap_or(quote!(::core::default::Default::default()));
        quote!(let #v = #d;)
    });
    let skipped: Vec<TokenStream> = skipped.collect();
    let construct = {
        let members = fields.iter().map(|f| &f.member);
        match shape {
            Fields::Named(_) => quote!(#ctor { #(#members: #vars),* }),
            Fields::Unnamed(_) => quote!(#ctor { #(#members: #vars),* }),
            Fields::Unit => quote!(#ctor),
        }
    };
    // Reading one element of a sequence.
    let seq_reads = read.iter().enumerate().map(|(i, f)| {
        let v = var_of(f);
        let ty = &f.ty;
        let elem = if f.attrs.with_serde {
            quote!(#k::de::SeqAccess::next_element::<#ty>(&mut __seq)?)
        } else {
            {
                let seed = seed_of(f);
                quote!(#k::de::SeqAccess::next_element_seed(&mut __seq, #seed)?)
            }
        };
        let missing = match default_of(f) {
            Some(d) => d,
            None => {
                quote!(return ::core::result::Result::Err(#k::de::Error::invalid_length(#i, &self)))
            }
        };
        quote! {
            let #v: #ty = match #elem {
                ::core::option::Option::Some(__x) => __x,
                ::core::option::Option::None => #missing,
            };
        }
    });
    let visit_seq = quote! {
        fn visit_seq<__A: #k::de::SeqAccess<'__de>>(self, mut __seq: __A)
            -> ::core::result::Result<Self::Value, __A::Error>
        {
            #container_default_stmt
            #(#seq_reads)*
            #(#skipped)*
            ::core::result::Result::Ok(#construct)
        }
    };
    let mut items = TokenStream::new();
    items.extend(quote!(const #fields_const: &[&str] = &[#(#names),*];));
    let visit_other = match shape {
        Fields::Named(_) => {
            let idents: Vec<Ident> = (0..read.len()).map(|i| format_ident!("__f{}", i)).collect();
            let keyed: Vec<(Vec<String>, Ident)> = read
                .iter()
                .zip(&idents)
                .map(|(f, id)| {
                    let mut ns = vec![f.name.clone()];
                    ns.extend(f.aliases.iter().cloned());
                    (ns, id.clone())
                })
                .collect();
            items.extend(identifier(
                &field_enum,
                &keyed,
                &fields_const,
                cont.deny_unknown_fields,
                false,
            ));
            let decls = read.iter().map(|f| {
                let v = var_of(f);
                let ty = &f.ty;
                quote!(let mut #v: ::core::option::Option<#ty> = ::core::option::Option::None;)
            });
            let arms = read.iter().zip(&idents).map(|(f, id)| {
                let v = var_of(f);
                let ty = &f.ty;
                let name = &f.name;
                let value = if f.attrs.with_serde {
                    quote!(#k::de::MapAccess::next_value::<#ty>(&mut __map)?)
                } else {
                    {
                        let seed = seed_of(f);
                        quote!(#k::de::MapAccess::next_value_seed(&mut __map, #seed)?)
                    }
                };
                quote! {
                    #field_enum::#id => {
                        if #v.is_some() {
                            return ::core::result::Result::Err(<__A::Error as #k::de::Error>::duplicate_field(#name));
                        }
                        #v = ::core::option::Option::Some(#value);
                    }
                }
            });
            let ignore = if cont.deny_unknown_fields {
                quote!()
            } else {
                quote!(#field_enum::__ignore => {
                    let _ = #k::de::MapAccess::next_value::<#k::de::IgnoredAny>(&mut __map)?;
                })
            };
            let finish = read.iter().map(|f| {
                let v = var_of(f);
                let ty = &f.ty;
                let name = &f.name;
                let missing = match default_of(f) {
                    Some(d) => d,
                    None if f.attrs.with_serde => {
                        quote!(#k::missing_field_serde::<#ty, __A::Error>(#name)?)
                    }
                    None => match &f.attrs.capacity {
                        Some(Capacity::Exactly(n)) => quote!(
                            #k::missing_field_capacity::<#s, __P, #ty, __A::Error>(
                                self.scope, #n, #name)?),
                        // A field the file leaves out has no count to add to: it reads
                        // as a field with no capacity (a missing-field error for a pool).
                        Some(Capacity::Extra(_)) | None => quote!(
                            #k::missing_field::<#s, __P, #ty, __A::Error>(self.scope, #name)?),
                    },
                };
                quote! {
                    let #v: #ty = match #v {
                        ::core::option::Option::Some(__x) => __x,
                        ::core::option::Option::None => #missing,
                    };
                }
            });
            quote! {
                fn visit_map<__A: #k::de::MapAccess<'__de>>(self, mut __map: __A)
                    -> ::core::result::Result<Self::Value, __A::Error>
                {
                    #container_default_stmt
                    #(#decls)*
                    while let ::core::option::Option::Some(__key) =
                        #k::de::MapAccess::next_key::<#field_enum>(&mut __map)?
                    {
                        match __key {
                            #(#arms)*
                            #ignore
                        }
                    }
                    #(#finish)*
                    #(#skipped)*
                    ::core::result::Result::Ok(#construct)
                }
            }
        }
        Fields::Unnamed(u) if u.unnamed.len() == 1 && read.len() == 1 => {
            let ty = &read[0].ty;
            let value = if read[0].attrs.with_serde {
                quote!(<#ty as #k::de::Deserialize<'__de>>::deserialize(__d)?)
            } else {
                {
                    let seed = seed_of(read[0]);
                    quote!(#k::de::DeserializeSeed::deserialize(#seed, __d)?)
                }
            };
            quote! {
                fn visit_newtype_struct<__D2: #k::de::Deserializer<'__de>>(self, __d: __D2)
                    -> ::core::result::Result<Self::Value, __D2::Error>
                {
                    ::core::result::Result::Ok(#ctor(#value))
                }
            }
        }
        Fields::Unnamed(_) => quote!(),
        Fields::Unit => quote! {
            fn visit_unit<__E: #k::de::Error>(self) -> ::core::result::Result<Self::Value, __E> {
                ::core::result::Result::Ok(#ctor)
            }
        },
    };
    items.extend(ctx.visitor_struct(vname));
    items.extend(ctx.visitor_impl(
        vname,
        quote! {
            fn expecting(&self, __f: &mut #k::fmt::Formatter<'_>) -> #k::fmt::Result {
                __f.write_str(#expecting)
            }
            #visit_seq
            #visit_other
        },
    ));
    Ok((items, fields_const))
}

/// What one variant's arm reads.
enum Shape {
    Unit,
    /// One field read alone: its index in the enum's list of fields.
    Newtype(usize),
    /// A tuple variant of `n` fields, or a struct variant, read by a body visitor.
    Tuple(TokenStream, usize),
    Struct(TokenStream, Ident),
}

/// An enum, in any of serde's four representations: externally tagged (`"Unit"`,
/// `{"Newtype": value}`, ...), internally tagged (`{"type": "Struct", ..fields}`),
/// adjacently tagged (`{"t": "Newtype", "c": value}`) and untagged (the first variant
/// that reads the value).
fn enum_body(
    ctx: &Ctx,
    name: &Ident,
    file_name: &str,
    e: &syn::DataEnum,
    cont: &Container,
) -> syn::Result<(TokenStream, TokenStream, TokenStream)> {
    let k = krate();
    let repr = cont.repr()?;
    let mut items = TokenStream::new();
    let mut keyed = Vec::new();
    let mut all_fields = Vec::new();
    // (variant ident, identifier ident, shape, file name)
    let mut variants: Vec<(Ident, Ident, Shape, String)> = Vec::new();
    for (i, v) in e.variants.iter().enumerate() {
        let vattrs = attr::member(&v.attrs)?;
        if let Some(c) = &vattrs.capacity {
            return Err(syn::Error::new_spanned(
                c.expr(),
                format!(
                    "DeserializeIn: `{}` belongs on a field, not on a variant",
                    c.name()
                ),
            ));
        }
        if vattrs.skip {
            continue;
        }
        let ident = &v.ident;
        let vname = match (&vattrs.rename, cont.rename_all) {
            (Some(r), _) => r.clone(),
            (None, Some(case)) => case.apply(&ident.to_string(), true),
            _ => ident.to_string(),
        };
        let id = format_ident!("__v{}", i);
        let mut ns = vec![vname.clone()];
        ns.extend(vattrs.aliases.iter().cloned());
        keyed.push((ns, id.clone()));
        let fields = specs(&v.fields, vattrs.rename_all)?;
        let shape = match &v.fields {
            Fields::Unit => Shape::Unit,
            Fields::Unnamed(u) if u.unnamed.len() == 1 && !fields[0].attrs.skip => {
                Shape::Newtype(all_fields.len())
            }
            shape => {
                if let (attr::Repr::Internal(_), Fields::Unnamed(_)) = (&repr, shape) {
                    return Err(syn::Error::new(
                        ident.span(),
                        "DeserializeIn: an internally tagged enum cannot hold a tuple \
                         variant (its fields have no names to sit beside the tag)",
                    ));
                }
                let vis = format_ident!("__Visitor{}", i);
                let ctor = quote!(#name::#ident);
                let var_cont = Container {
                    deny_unknown_fields: cont.deny_unknown_fields,
                    ..Container::default()
                };
                let (its, fields_const) = body_visitor(
                    ctx,
                    &vis,
                    &ctor,
                    shape,
                    &fields,
                    &var_cont,
                    false,
                    &i.to_string(),
                    &format!("variant {name}::{ident}"),
                )?;
                items.extend(its);
                let visitor = quote!(#vis { scope: self.scope, _m: #k::PhantomData });
                match shape {
                    Fields::Named(_) => Shape::Struct(visitor, fields_const),
                    _ => Shape::Tuple(visitor, fields.iter().filter(|f| !f.attrs.skip).count()),
                }
            }
        };
        variants.push((ident.clone(), id, shape, vname));
        all_fields.extend(fields);
    }
    let names: Vec<&String> = keyed.iter().map(|(ns, _)| &ns[0]).collect();
    let variants_const = format_ident!("__VARIANTS");
    items.extend(quote!(const #variants_const: &[&str] = &[#(#names),*];));
    items.extend(identifier(
        &format_ident!("__Variant"),
        &keyed,
        &variants_const,
        true,
        true,
    ));
    let vname = format_ident!("__Visitor");
    items.extend(ctx.visitor_struct(&vname));
    let new_visitor = quote!(#vname { scope: __scope, _m: #k::PhantomData });
    let err_of = quote!(<__D as #k::de::Deserializer<'__de>>::Error);

    if let attr::Repr::External = repr {
        let mut arms = TokenStream::new();
        for (ident, id, shape, _) in &variants {
            arms.extend(match shape {
                Shape::Unit => quote! {
                    (__Variant::#id, __a) => {
                        #k::de::VariantAccess::unit_variant(__a)?;
                        ::core::result::Result::Ok(#name::#ident)
                    }
                },
                Shape::Newtype(at) => {
                    let f = &all_fields[*at];
                    let ty = &f.ty;
                    let value = if f.attrs.with_serde {
                        quote!(#k::de::VariantAccess::newtype_variant::<#ty>(__a)?)
                    } else {
                        let seed = seed_of(f);
                        quote!(#k::de::VariantAccess::newtype_variant_seed(__a, #seed)?)
                    };
                    quote! {
                        (__Variant::#id, __a) => ::core::result::Result::Ok(#name::#ident(#value)),
                    }
                }
                Shape::Tuple(visitor, n) => quote! {
                    (__Variant::#id, __a) => #k::de::VariantAccess::tuple_variant(__a, #n, #visitor),
                },
                Shape::Struct(visitor, fields_const) => quote! {
                    (__Variant::#id, __a) =>
                        #k::de::VariantAccess::struct_variant(__a, #fields_const, #visitor),
                },
            });
        }
        let expecting = format!("enum {name}");
        items.extend(ctx.visitor_impl(
            &vname,
            quote! {
                fn expecting(&self, __f: &mut #k::fmt::Formatter<'_>) -> #k::fmt::Result {
                    __f.write_str(#expecting)
                }
                fn visit_enum<__A: #k::de::EnumAccess<'__de>>(self, __data: __A)
                    -> ::core::result::Result<Self::Value, __A::Error>
                {
                    match #k::de::EnumAccess::variant::<__Variant>(__data)? {
                        #arms
                    }
                }
            },
        ));
        let drive = quote! {
            #k::de::Deserializer::deserialize_enum(__de, #file_name, #variants_const, #new_visitor)
        };
        return Ok((items, drive, places_of(ctx, &all_fields)));
    }

    // The other three read a variant from a deserializer of its value alone:
    // `__Visitor::__variant(id, deserializer)`.
    let internal = matches!(repr, attr::Repr::Internal(_));
    let mut arms = TokenStream::new();
    for (ident, id, shape, file) in &variants {
        arms.extend(match shape {
            Shape::Unit => {
                let expecting = format!("unit variant {name}::{ident}");
                quote! {
                    __Variant::#id => {
                        #k::de::Deserializer::deserialize_unit(
                            __d, #k::UnitOnly { expecting: #expecting, map: #internal })?;
                        ::core::result::Result::Ok(#name::#ident)
                    }
                }
            }
            Shape::Newtype(at) => {
                let f = &all_fields[*at];
                let ty = &f.ty;
                let value = if f.attrs.with_serde {
                    quote!(<#ty as #k::de::Deserialize<'__de>>::deserialize(__d)?)
                } else {
                    let seed = seed_of(f);
                    quote!(#k::de::DeserializeSeed::deserialize(#seed, __d)?)
                };
                quote!(__Variant::#id => ::core::result::Result::Ok(#name::#ident(#value)),)
            }
            Shape::Tuple(visitor, n) => quote! {
                __Variant::#id => #k::de::Deserializer::deserialize_tuple(__d, #n, #visitor),
            },
            Shape::Struct(visitor, fields_const) => quote! {
                __Variant::#id =>
                    #k::de::Deserializer::deserialize_struct(__d, #file, #fields_const, #visitor),
            },
        });
    }
    let (ig, tg, w) = ctx.vis_generics.split_for_impl();
    let self_ty = &ctx.self_ty;
    items.extend(quote! {
        impl #ig #vname #tg #w {
            fn __variant<'__de, __D2: #k::de::Deserializer<'__de>>(&self, __id: __Variant, __d: __D2)
                -> ::core::result::Result<#self_ty, __D2::Error>
            {
                match __id {
                    #arms
                }
            }
        }
    });
    let drive = match repr {
        attr::Repr::Internal(tag) => {
            let expecting = format!("internally tagged enum {name}");
            quote! {{
                let __v = #new_visitor;
                #k::tagged(__de, #tag, #expecting, move |__t, __rest| {
                    let __id: __Variant =
                        #k::de::Deserialize::deserialize(#k::replay::<#err_of>(__t))?;
                    __v.__variant(__id, #k::replay::<#err_of>(__rest))
                })
            }}
        }
        attr::Repr::Untagged => {
            let msg = format!("data did not match any variant of untagged enum {name}");
            let ids = variants.iter().map(|(_, id, _, _)| id);
            quote! {{
                let __v = #new_visitor;
                #k::buffered(__de, move |__c| {
                    #(
                        if let ::core::result::Result::Ok(__x) =
                            __v.__variant(__Variant::#ids, #k::replay::<#k::Mismatch>(__c))
                        {
                            return ::core::result::Result::Ok(__x);
                        }
                    )*
                    ::core::result::Result::Err(<#err_of as #k::de::Error>::custom(#msg))
                })
            }}
        }
        attr::Repr::Adjacent(tag, content) => {
            let seed = format_ident!("__Seed");
            let (g, _, _) = ctx.vis_generics.split_for_impl();
            let s = &ctx.s_lt;
            let mut sg = ctx.vis_generics.clone();
            sg.params.insert(0, parse_quote!('__de));
            let (sig, _, _) = sg.split_for_impl();
            items.extend(quote! {
                struct #seed #g #w {
                    scope: __P,
                    id: __Variant,
                    _m: #k::PhantomData<fn() -> (&#s (), #self_ty)>,
                }
                impl #sig #k::de::DeserializeSeed<'__de> for #seed #tg #w {
                    type Value = #self_ty;
                    fn deserialize<__D2: #k::de::Deserializer<'__de>>(self, __d: __D2)
                        -> ::core::result::Result<#self_ty, __D2::Error>
                    {
                        #vname { scope: self.scope, _m: #k::PhantomData }.__variant(self.id, __d)
                    }
                }
            });
            let expecting = format!("adjacently tagged enum {name}");
            let deny = cont.deny_unknown_fields;
            let make_seed = quote! {
                move |__id: __Variant| #seed { scope: __scope, id: __id, _m: #k::PhantomData }
            };
            items.extend(ctx.visitor_impl(
                &vname,
                quote! {
                    fn expecting(&self, __f: &mut #k::fmt::Formatter<'_>) -> #k::fmt::Result {
                        __f.write_str(#expecting)
                    }
                    fn visit_map<__A: #k::de::MapAccess<'__de>>(self, __map: __A)
                        -> ::core::result::Result<Self::Value, __A::Error>
                    {
                        let __scope = self.scope;
                        #k::adjacent_map(__map, &[#tag, #content], #deny, #make_seed)
                    }
                    fn visit_seq<__A: #k::de::SeqAccess<'__de>>(self, __seq: __A)
                        -> ::core::result::Result<Self::Value, __A::Error>
                    {
                        let __scope = self.scope;
                        #k::adjacent_seq(__seq, &self, #make_seed)
                    }
                },
            ));
            quote! {
                #k::de::Deserializer::deserialize_struct(
                    __de, #file_name, &[#tag, #content], #new_visitor)
            }
        }
        attr::Repr::External => unreachable!("handled above"),
    };
    Ok((items, drive, places_of(ctx, &all_fields)))
}

#[cfg(test)]
mod tests {
    use super::expand;
    use syn::{parse_quote, DeriveInput};

    /// The message of the error `expand` gives for `input`.
    fn error_of(input: DeriveInput) -> String {
        match expand(input) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    /// Expands `input` (the generated code itself is compiled by the main crate's
    /// tests, `tests/serde_levels.rs` and `tests/serde_enums.rs`).
    fn expands(input: DeriveInput) -> String {
        match expand(input) {
            Ok(out) => out.to_string(),
            Err(e) => panic!("expected an expansion: {e}"),
        }
    }

    #[test]
    fn struct_attributes_are_accepted() {
        let out = expands(parse_quote! {
            #[serde(rename = "L", rename_all = "camelCase", deny_unknown_fields, default)]
            #[serde(skip_serializing_if = "x", serialize_with = "y")]
            struct Level<'s> {
                #[serde(rename = "n", alias = "name", default)]
                level_name: &'s str,
                #[serde(default = "seven")]
                lives: u8,
                #[serde(skip)]
                loaded: u64,
                #[serde(skip_deserializing)]
                cache: u32,
                #[scope(with_serde)]
                title: String,
                #[scope(capacity = 64)]
                pool: Pool<'s>,
                #[scope(capacity = SPARE * 2)]
                other: Pool<'s>,
                #[scope(extra = 256)]
                grows: Pool<'s>,
            }
        });
        assert!(out.contains("CapacitySeed"), "{out}");
        assert!(out.contains(":: extra (self . scope , 256)"), "{out}");
        assert!(
            out.contains("\"levelName\"") || out.contains("\"n\""),
            "{out}"
        );
    }

    #[test]
    fn enum_representations_are_accepted() {
        for input in [
            parse_quote! {
                #[serde(tag = "type", rename_all = "snake_case")]
                enum E<'s> { A, B(Inner<'s>), C { x: &'s str } }
            },
            parse_quote! {
                #[serde(tag = "t", content = "c")]
                enum E<'s> { A, B(&'s str), C(u8, u8), D { x: u8 } }
            },
            parse_quote! {
                #[serde(untagged)]
                enum E<'s> { A, B(&'s str), C(u8, u8), D { x: u8 } }
            },
            parse_quote! {
                enum E<'s> {
                    #[serde(rename = "a", alias = "aa")] A,
                    #[serde(rename_all = "camelCase")] B { long_name: &'s str },
                    #[serde(skip)] C,
                }
            },
        ] {
            expands(input);
        }
        let out = expands(parse_quote! {
            #[serde(untagged)]
            enum V { A(u8) }
        });
        assert!(out.contains("data did not match any variant of untagged enum V"));
    }

    #[test]
    fn unknown_attributes_are_refused() {
        let e = error_of(parse_quote! {
            struct S { #[serde(flatten)] x: u8 }
        });
        assert!(
            e.contains("DeserializeIn does not support `flatten` here"),
            "{e}"
        );
        let e = error_of(parse_quote! {
            #[serde(transparent)]
            struct S(u8);
        });
        assert!(e.contains("does not support `transparent`"), "{e}");
        let e = error_of(parse_quote! {
            enum E { #[serde(other)] A }
        });
        assert!(e.contains("does not support `other`"), "{e}");
        let e = error_of(parse_quote! {
            #[serde(rename_all = "Title Case")]
            struct S { x: u8 }
        });
        assert!(e.contains("unknown rename_all case"), "{e}");
    }

    #[test]
    fn bad_combinations_are_refused() {
        let cases: [(DeriveInput, &str); 12] = [
            (
                parse_quote!(
                    #[serde(tag = "t")]
                    struct S {
                        x: u8,
                    }
                ),
                "apply to enums only",
            ),
            (
                parse_quote!(
                    #[serde(content = "c")]
                    enum E {
                        A,
                    }
                ),
                "`content` needs a `tag`",
            ),
            (
                parse_quote!(
                    #[serde(untagged, tag = "t")]
                    enum E {
                        A,
                    }
                ),
                "`untagged` cannot be combined",
            ),
            (
                parse_quote!(
                    #[serde(tag = "t", content = "t")]
                    enum E {
                        A,
                    }
                ),
                "must name different fields",
            ),
            (
                parse_quote!(
                    #[serde(tag = "t")]
                    enum E {
                        A(u8, u8),
                    }
                ),
                "cannot hold a tuple variant",
            ),
            (
                parse_quote!(
                    struct S {
                        #[scope(capacity = 4, with_serde)]
                        x: Vec<u8>,
                    }
                ),
                "`capacity` needs a field read with DeserializeIn",
            ),
            (
                parse_quote!(
                    enum E {
                        #[scope(capacity = 4)]
                        A(u8),
                    }
                ),
                "`capacity` belongs on a field",
            ),
            (
                parse_quote!(
                    struct S {
                        #[scope(extra = 4, with_serde)]
                        x: Vec<u8>,
                    }
                ),
                "`extra` needs a field read with DeserializeIn",
            ),
            (
                parse_quote!(
                    enum E {
                        #[scope(extra = 4)]
                        A(u8),
                    }
                ),
                "`extra` belongs on a field",
            ),
            (
                parse_quote!(
                    struct S {
                        #[scope(capacity = 4, extra = 8)]
                        x: u8,
                    }
                ),
                "not both",
            ),
            (
                parse_quote!(
                    struct S {
                        #[scope(extra = 4)]
                        #[scope(capacity = 8)]
                        x: u8,
                    }
                ),
                "not both",
            ),
            (
                parse_quote!(
                    struct S {
                        #[scope(extra = 4, extra = 8)]
                        x: u8,
                    }
                ),
                "`extra` is given twice",
            ),
        ];
        for (input, msg) in cases {
            let e = error_of(input);
            assert!(e.contains(msg), "{e} (wanted {msg})");
        }
        let e = error_of(parse_quote!(union U { a: u8 }));
        assert!(e.contains("cannot be derived for a union"), "{e}");
    }
}
