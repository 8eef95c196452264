use super::*;
use crate::zoo::from_spec;

#[test]
fn others_become_switches() {
    let t = from_spec("mesh:3x3").unwrap();
    let r = restrict_ranks(&t, &[5, 0, 3]).unwrap();
    assert_eq!(r.n_ranks(), 3);
    assert_eq!(r.n_switches(), 6);
    assert_eq!(r.links.len(), t.links.len());
    assert_eq!(r.rank_node(1), t.rank_node(3));
    assert!(restrict_ranks(&t, &[0, 0]).is_err());
    assert!(restrict_ranks(&t, &[9]).is_err());
    assert_eq!(parse_ranks("0,3-5").unwrap(), vec![0, 3, 4, 5]);
    assert!(parse_ranks("a").is_err());
}

#[test]
fn a_rank_list_past_the_memory_budget_is_refused_before_it_is_made() {
    for text in ["0-1000000000000", "0-3,4-99999999999999", &format!("0-{}", usize::MAX - 1)] {
        let err = parse_ranks(text).unwrap_err();
        assert!(err.message().starts_with(&format!("--ranks {text} needs about ")), "{err}");
        assert!(err.message().contains("--memory-budget"), "{err}");
    }
}
