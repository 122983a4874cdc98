use std::fmt::Display;

pub fn show<T: Display>(v: T) -> String {
    format!("<{}>", v)
}
