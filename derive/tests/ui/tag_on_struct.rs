use scope_stack::serde::DeserializeIn;

#[derive(DeserializeIn)]
#[serde(rename_all = "camelCase", tag = "type")]
struct Level {
    size: u32,
}

fn main() {}
