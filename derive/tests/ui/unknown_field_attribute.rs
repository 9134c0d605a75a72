use scope_stack::serde::DeserializeIn;

#[derive(DeserializeIn)]
struct Level<'s> {
    name: &'s str,
    #[serde(flatten)]
    extra: &'s str,
}

fn main() {}
