//! Links the addon the way Node loads it (napi-build sets the platform's linker flags).
fn main() {
    napi_build::setup();
}
