use scope_stack::serde::DeserializeIn;

#[derive(DeserializeIn)]
#[serde(tag = "type")]
enum Shape {
    Empty,
    Point(f32, f32),
}

fn main() {}
