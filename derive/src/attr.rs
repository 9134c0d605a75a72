//! The attributes `#[derive(DeserializeIn)]` reads, from `#[serde(...)]` (shared with
//! serde's own derives) and `#[scope(...)]` (this crate's).
//!
//! Invariant: every attribute is either understood, known to serialization only
//! (ignored, so one set of attributes serves `Serialize` too), or refused with a
//! compile error at its own span.
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr, Path};

/// A case convention of `rename_all`.
#[derive(Clone, Copy)]
pub enum Case {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl Case {
    fn parse(s: &LitStr) -> syn::Result<Case> {
        Ok(match s.value().as_str() {
            "lowercase" => Case::Lower,
            "UPPERCASE" => Case::Upper,
            "PascalCase" => Case::Pascal,
            "camelCase" => Case::Camel,
            "snake_case" => Case::Snake,
            "SCREAMING_SNAKE_CASE" => Case::ScreamingSnake,
            "kebab-case" => Case::Kebab,
            "SCREAMING-KEBAB-CASE" => Case::ScreamingKebab,
            _ => return Err(syn::Error::new(s.span(), "unknown rename_all case")),
        })
    }

    /// The name of a field (written in snake_case) or a variant (in PascalCase).
    pub fn apply(self, name: &str, is_variant: bool) -> String {
        // Split into lowercase words.
        let mut words: Vec<String> = Vec::new();
        if is_variant {
            let mut cur = String::new();
            for ch in name.chars() {
                if ch.is_uppercase() && !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                cur.extend(ch.to_lowercase());
            }
            if !cur.is_empty() {
                words.push(cur);
            }
        } else {
            words = name
                .split('_')
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
        }
        let cap = |w: &String| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        };
        match self {
            Case::Lower => words.concat(),
            Case::Upper => words.concat().to_uppercase(),
            Case::Pascal => words.iter().map(cap).collect(),
            Case::Camel => words
                .iter()
                .enumerate()
                .map(|(i, w)| if i == 0 { w.clone() } else { cap(w) })
                .collect(),
            Case::Snake => words.join("_"),
            Case::ScreamingSnake => words.join("_").to_uppercase(),
            Case::Kebab => words.join("-"),
            Case::ScreamingKebab => words.join("-").to_uppercase(),
        }
    }
}

/// Where a missing field's value comes from.
#[derive(Clone)]
pub enum Default {
    /// Nowhere: an error (or `None` for an `Option`).
    None,
    /// `Default::default()`.
    Trait,
    /// A function: `default = "path"`.
    Path(Path),
}

/// Attributes of the struct or enum.
#[derive(Default)]
pub struct Container {
    pub rename: Option<String>,
    pub rename_all: Option<Case>,
    pub default: bool,
    pub deny_unknown_fields: bool,
    /// `tag = "..."`: internally tagged, or adjacently with `content`.
    pub tag: Option<String>,
    /// `content = "..."`: adjacently tagged.
    pub content: Option<String>,
    /// `untagged`.
    pub untagged: bool,
    /// Where the first of `tag`, `content` or `untagged` was written (for errors).
    pub repr_span: Option<Span>,
}

/// How an enum is written in the file.
pub enum Repr<'a> {
    /// `{"Variant": value}` or `"Variant"` (serde's default).
    External,
    /// `{"tag": "Variant", ...fields}`.
    Internal(&'a str),
    /// `{"tag": "Variant", "content": value}`.
    Adjacent(&'a str, &'a str),
    /// The value alone; the first variant that reads it wins.
    Untagged,
}

impl Container {
    /// The enum representation, or an error at the attribute for a bad combination.
    pub fn repr(&self) -> syn::Result<Repr<'_>> {
        let span = self.repr_span.unwrap_or_else(Span::call_site);
        match (&self.tag, &self.content, self.untagged) {
            (None, None, false) => Ok(Repr::External),
            (Some(t), None, false) => Ok(Repr::Internal(t)),
            (Some(t), Some(c), false) if t != c => Ok(Repr::Adjacent(t, c)),
            (Some(_), Some(_), false) => Err(syn::Error::new(
                span,
                "DeserializeIn: `tag` and `content` must name different fields",
            )),
            (None, Some(_), false) => Err(syn::Error::new(
                span,
                "DeserializeIn: `content` needs a `tag` (adjacently tagged enum)",
            )),
            (_, _, true) => match (&self.tag, &self.content) {
                (None, None) => Ok(Repr::Untagged),
                _ => Err(syn::Error::new(
                    span,
                    "DeserializeIn: `untagged` cannot be combined with `tag` or `content`",
                )),
            },
        }
    }
}

/// Attributes of a field or a variant.
pub struct Member {
    pub rename: Option<String>,
    pub aliases: Vec<String>,
    pub rename_all: Option<Case>,
    pub default: Default,
    pub skip: bool,
    pub with_serde: bool,
    /// `#[scope(capacity = N)]` or `#[scope(extra = N)]`: read with a `CapacitySeed`.
    pub capacity: Option<Capacity>,
}

/// The capacity a field asks for, with `CapacitySeed`.
pub enum Capacity {
    /// `capacity = N`: exactly `N` (`CapacitySeed::new`).
    Exactly(syn::Expr),
    /// `extra = N`: the file's count and `N` more (`CapacitySeed::extra`).
    Extra(syn::Expr),
}

impl Capacity {
    /// The expression written, for the seed and for errors.
    pub fn expr(&self) -> &syn::Expr {
        match self {
            Capacity::Exactly(e) | Capacity::Extra(e) => e,
        }
    }

    /// The attribute's name, for errors.
    pub fn name(&self) -> &'static str {
        match self {
            Capacity::Exactly(_) => "capacity",
            Capacity::Extra(_) => "extra",
        }
    }
}

/// Attributes that only serialization reads: accepted and ignored.
const SERIALIZE_ONLY: &[&str] = &[
    "skip_serializing",
    "skip_serializing_if",
    "serialize_with",
    "getter",
    "into",
];

fn ours(attr: &Attribute) -> bool {
    attr.path().is_ident("serde") || attr.path().is_ident("scope")
}

fn lit(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    meta.value()?.parse::<LitStr>()
}

fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: proc_macro2::TokenStream = content.parse()?;
    }
    Ok(())
}

fn unsupported(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Error {
    let name = meta
        .path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_default();
    meta.error(format!(
        "DeserializeIn does not support `{name}` here (supported: on the type rename, \
         rename_all, default, deny_unknown_fields, tag, content, untagged; on a field \
         rename, alias, default, skip, skip_deserializing, with_serde, capacity, \
         extra; on a variant rename, alias, rename_all, skip)"
    ))
}

/// Reads the attributes of the type.
pub fn container(attrs: &[Attribute]) -> syn::Result<Container> {
    let mut c = Container::default();
    for attr in attrs.iter().filter(|a| ours(a)) {
        attr.parse_nested_meta(|meta| {
            let p = &meta.path;
            if p.is_ident("rename") {
                c.rename = Some(lit(&meta)?.value());
            } else if p.is_ident("rename_all") {
                c.rename_all = Some(Case::parse(&lit(&meta)?)?);
            } else if p.is_ident("default") {
                if meta.input.peek(syn::Token![=]) {
                    return Err(
                        meta.error("DeserializeIn supports `default` without a path on the type")
                    );
                }
                c.default = true;
            } else if p.is_ident("deny_unknown_fields") {
                c.deny_unknown_fields = true;
            } else if p.is_ident("tag") {
                c.repr_span.get_or_insert(p.span());
                c.tag = Some(lit(&meta)?.value());
            } else if p.is_ident("content") {
                c.repr_span.get_or_insert(p.span());
                c.content = Some(lit(&meta)?.value());
            } else if p.is_ident("untagged") {
                c.repr_span.get_or_insert(p.span());
                c.untagged = true;
            } else if SERIALIZE_ONLY.iter().any(|s| p.is_ident(s)) {
                skip_value(&meta)?;
            } else {
                return Err(unsupported(&meta));
            }
            Ok(())
        })?;
    }
    Ok(c)
}

/// Reads the attributes of a field or variant.
pub fn member(attrs: &[Attribute]) -> syn::Result<Member> {
    let mut m = Member {
        rename: None,
        aliases: Vec::new(),
        rename_all: None,
        default: Default::None,
        skip: false,
        with_serde: false,
        capacity: None,
    };
    for attr in attrs.iter().filter(|a| ours(a)) {
        attr.parse_nested_meta(|meta| {
            let p = &meta.path;
            if p.is_ident("rename") {
                m.rename = Some(lit(&meta)?.value());
            } else if p.is_ident("alias") {
                m.aliases.push(lit(&meta)?.value());
            } else if p.is_ident("rename_all") {
                m.rename_all = Some(Case::parse(&lit(&meta)?)?);
            } else if p.is_ident("default") {
                m.default = if meta.input.peek(syn::Token![=]) {
                    Default::Path(lit(&meta)?.parse()?)
                } else {
                    Default::Trait
                };
            } else if p.is_ident("skip") || p.is_ident("skip_deserializing") {
                m.skip = true;
            } else if p.is_ident("with_serde") {
                m.with_serde = true;
            } else if p.is_ident("capacity") || p.is_ident("extra") {
                let exactly = p.is_ident("capacity");
                if let Some(first) = &m.capacity {
                    let this = if exactly { "capacity" } else { "extra" };
                    return Err(meta.error(if first.name() == this {
                        format!("DeserializeIn: `{this}` is given twice")
                    } else {
                        "DeserializeIn: give `capacity = N` (exactly N) or `extra = N` (the \
                         file's count and N more), not both"
                            .to_owned()
                    }));
                }
                let n: syn::Expr = meta.value()?.parse()?;
                m.capacity = Some(if exactly {
                    Capacity::Exactly(n)
                } else {
                    Capacity::Extra(n)
                });
            } else if SERIALIZE_ONLY.iter().any(|s| p.is_ident(s)) {
                skip_value(&meta)?;
            } else {
                return Err(unsupported(&meta));
            }
            Ok(())
        })?;
    }
    Ok(m)
}
