package tui

// slashCompletions are the slash commands word ("/…", the whole editor so far) completes
// to: the commands and the loaded skills (/skill:NAME) whose names hold its letters in
// order, a prefix first, each with its arguments and one line of help.
func (m *Model) slashCompletions(word string) completions {
	help := map[string]completion{}
	var names []string
	for _, c := range slashCommands() {
		if c.run == nil {
			continue // /skill:NAME stands for the skills, listed below
		}
		names = append(names, c.name)
		help[c.name] = completion{insert: "/" + c.name, args: c.args, help: c.help}
	}
	if lib := m.e.library(); lib != nil {
		for _, s := range lib.Skills() {
			name := "skill:" + s
			names = append(names, name)
			help[name] = completion{insert: "/" + name, args: "[MESSAGE]", help: "send MESSAGE with the skill's full text pinned to it"}
		}
	}
	c := completions{word: word, slash: true}
	for _, n := range c.take(fuzzy(names, word[1:])) {
		c.items = append(c.items, help[n])
	}
	return c
}
