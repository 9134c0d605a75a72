// Rule 4: a value that gets a finalizer must be 'static, or its destructor could read
// data that was destroyed first.
use scope_stack::LinearAllocator;

struct Reader<'a>(&'a String);

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        println!("{}", self.0);
    }
}

fn main() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    memory.scope("level", |level| {
        let later = level.new_object(String::from("destroyed first"));
        level.new_object(Reader(later));
    });
}
