use scope_stack::serde::{DeserializeIn, PoolIn};

#[derive(DeserializeIn)]
enum Wave<'s> {
    #[scope(extra = 4)]
    Enemies(PoolIn<'s, u32>),
}

fn main() {}
