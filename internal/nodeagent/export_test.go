package nodeagent

// RuleOf is the index in the allow-list of the rule argv passes.
func RuleOf(argv []string) (int, error) {
	r, err := match(argv)
	if err != nil {
		return -1, err
	}
	for i := range rules {
		if &rules[i] == r {
			return i, nil
		}
	}
	return -1, nil
}

// RuleCount is how many rules there are; RuleName names one.
func RuleCount() int { return len(rules) }
func RuleName(i int) string {
	return rules[i].program + " " + rules[i].verb + " (" + rules[i].sender + ")"
}
