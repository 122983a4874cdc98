use asserteq::parse_pair;

#[test]
fn parses_spaces() {
    assert_eq!(parse_pair("1, 2"), Some((1, 2)));
}

#[test]
fn parses_negative() {
    let got = parse_pair("-1;2");
    assert_eq!(got, Some((-1, 2)), "input was {:?}", "-1;2");
}
