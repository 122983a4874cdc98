package redact

import "testing"

// TestCommandPasswords pins the command-password rule: a password given
// with a command's own short flag goes; a flag with no value, a variable,
// another command's -p and prose stay.
func TestCommandPasswords(t *testing.T) {
	const p = "[REDACTED:command-password]"
	w1, w2 := "Wel"+"come1", "hun"+"ter22"
	runCases(t, Default(), []redactCase{
		{"mysql attached", "mysql -u root -p" + w1 + " app", "mysql -u root -p" + p + " app"},
		{"mysqldump by path", "/usr/bin/mysqldump -uroot -p'" + w1 + "' app > app.sql", "/usr/bin/mysqldump -uroot -p'" + p + "' app > app.sql"},
		{"docker login", "docker login -u bob -p " + w2 + " registry.example.com", "docker login -u bob -p " + p + " registry.example.com"},
		{"podman login equals", "podman login -p=" + w2 + " quay.io", "podman login -p=" + p + " quay.io"},
		{"helm registry login", "helm registry login ghcr.io -u bob -p " + w2, "helm registry login ghcr.io -u bob -p " + p},
		{"sshpass", "sshpass -p " + w2 + " ssh bob@host", "sshpass -p " + p + " ssh bob@host"},
		{"redis-cli", "redis-cli -h cache -a " + w2 + " ping", "redis-cli -h cache -a " + p + " ping"},
		{"mongo", `mongo -u bob -p "` + w1 + `" admin`, `mongo -u bob -p "` + p + `" admin`},
		{"ldapsearch", "ldapsearch -x -D cn=admin -w " + w2 + " -b dc=ex", "ldapsearch -x -D cn=admin -w " + p + " -b dc=ex"},

		{"mysql prompts", "mysql -u root -p app", ""},
		{"a variable", "docker login -u bob -p $REGISTRY_TOKEN registry", ""},
		{"a template", "sshpass -p ${SSH_PASS} ssh host", ""},
		{"another command's -p", "mkdir -p build && cp -p a b", ""},
		{"-p of a port after the pipe", "mysql -e 'select 1' | nc -p 3306 host", ""},
		{"prose", "Log in with docker login before you push.", ""},
	})
}
