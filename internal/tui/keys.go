package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// key handles a key press: the question in front of the user first, then the UI's own keys,
// then the editor.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" {
		m.armedQuit = false
	}
	if m.ask != nil && m.always {
		return m.alwaysKey(s)
	}
	if m.ask != nil && !m.denying {
		return m.answerKey(s)
	}
	if m.picker != nil {
		return m.pickerKey(k)
	}
	if !m.denying && m.popupKey(s, m.completions()) {
		return nil
	}
	switch s {
	case "ctrl+c":
		if m.armedQuit {
			return m.quit()
		}
		m.armedQuit = true
		if !m.abort() {
			m.input.Reset()
		}
		return nil
	case "esc":
		if m.denying {
			m.denying = false
			m.input.SetValue(m.savedInput)
			return nil
		}
		if m.help {
			m.help = false
			return nil
		}
		m.abort()
		return nil
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.quit()
		}
	case "ctrl+t":
		m.thinking = !m.thinking
		return nil
	case "ctrl+g":
		if !m.denying {
			return m.openEditor()
		}
	case "ctrl+o":
		m.expand = !m.expand
		return nil
	case "pgup", "shift+up":
		step := max(1, m.transcriptHeight()-2)
		if s == "shift+up" {
			step = 1
		}
		if !m.atTop {
			m.scroll += step
		}
		return nil
	case "pgdown", "shift+down":
		step := max(1, m.transcriptHeight()-2)
		if s == "shift+down" {
			step = 1
		}
		m.scroll = max(0, m.scroll-step)
		return nil
	case "enter":
		if m.denying {
			return m.deny()
		}
		return m.enter()
	case "alt+enter":
		return m.submit(true)
	case "tab":
		if m.complete(m.completions()) {
			return nil
		}
	case "backspace":
		if m.deletePaste() {
			return nil
		}
	case "ctrl+v":
		return m.readClipboard()
	case "alt+up":
		m.editQueued()
		return nil
	case "up":
		if m.input.Value() == "" && m.editQueued() {
			return nil
		}
		if m.input.onFirstRow() && m.browse(-1) {
			return nil
		}
	case "down":
		if m.input.onLastRow() && m.browse(1) {
			return nil
		}
	}
	return m.input.Update(k)
}

// answerKey answers the question in front of the user: y allow once, s allow for the
// session, a always allow (then where), n deny (then a reason), esc abort the run.
func (m *Model) answerKey(s string) tea.Cmd {
	a := m.ask
	switch s {
	case "y", "Y", "enter":
		m.reply(Answer{Allow: true})
	case "s", "S":
		if a.approval != nil {
			m.e.allowSession(a.approval)
			m.reply(Answer{Allow: true})
		}
	case "a", "A":
		if a.approval != nil && m.e.rules() != nil {
			m.always = true
		}
	case "n", "N":
		if a.approval == nil {
			m.reply(Answer{})
			return nil
		}
		m.denying = true
		m.savedInput = m.input.Value()
		m.input.Reset()
	case "esc":
		m.reply(Answer{})
		m.abort()
	case "ctrl+c":
		if m.armedQuit {
			return m.quit()
		}
		m.armedQuit = true
		m.reply(Answer{})
		m.abort()
	}
	return nil
}

// deny sends the denial with the reason typed in the editor.
func (m *Model) deny() tea.Cmd {
	reason := m.input.Value()
	m.denying = false
	m.input.SetValue(m.savedInput)
	m.reply(Answer{Reason: reason})
	return nil
}

func (m *Model) reply(a Answer) {
	if m.ask == nil {
		return
	}
	m.ask.reply <- a // buffered: the asker may have stopped waiting
	m.ask = nil
}

// alwaysKey picks the settings file "always allow" writes the rule to: p the project's
// (offered only when the project is trusted: an untrusted project's settings are not read),
// u the user's; esc goes back to the choices.
func (m *Model) alwaysKey(s string) tea.Cmd {
	project := false
	switch s {
	case "p", "P":
		if !m.current().Trusted {
			return nil
		}
		project = true
	case "u", "U":
	case "esc":
		m.always = false
		return nil
	default:
		return nil
	}
	m.always = false
	rule, path, err := m.e.allowAlways(m.ask.approval, project)
	if err != nil {
		m.t.add(newNotice(fmt.Sprintf("always allow %s: %v", rule, err), "error"))
		return nil
	}
	m.info(fmt.Sprintf("always allowed: %s (written to %s; /permissions lists it)", rule, path))
	m.reply(Answer{Allow: true})
	return nil
}
