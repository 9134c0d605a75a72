use scope_stack::serde::{DeserializeIn, PoolIn};

#[derive(DeserializeIn)]
struct Level<'s> {
    #[scope(capacity = 64, extra = 8)]
    enemies: PoolIn<'s, u32>,
}

fn main() {}
