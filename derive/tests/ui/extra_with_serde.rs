use scope_stack::serde::DeserializeIn;

#[derive(DeserializeIn)]
struct Level {
    #[scope(with_serde, extra = 16)]
    names: Vec<String>,
}

fn main() {}
