package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shirube/shirube/internal/config"
)

// settingAnnotation marks a flag defined from the settings table.
const settingAnnotation = "shirube_setting"

// settingFlag adds to fs the flag of the setting that the flag name sets,
// with the setting's default and help; usage, when given, replaces the
// help for this command. The flag's variable is named in its help. A name
// that is not in the settings table panics, so a misspelt flag fails every
// test that builds the command tree instead of being ignored.
func settingFlag(fs *pflag.FlagSet, name string, usage ...string) {
	st, ok := config.SettingByFlag(name)
	if !ok {
		panic("no setting has the flag --" + name)
	}
	help := st.Usage
	if len(usage) > 0 {
		help = usage[0]
	}
	if st.Env != "" {
		help += " (" + st.Env + ")"
	}
	def := st.Get(config.Default())
	switch st.Kind {
	case config.KindInt:
		n, _ := strconv.Atoi(def)
		fs.Int(name, n, help)
	case config.KindFloat:
		f, _ := strconv.ParseFloat(def, 64)
		fs.Float64(name, f, help)
	case config.KindBool:
		fs.Bool(name, def == "true", help)
	case config.KindDuration:
		d, _ := time.ParseDuration(def)
		fs.Duration(name, d, help)
	case config.KindList:
		fs.StringSlice(name, nil, help)
	default:
		fs.String(name, def, help)
	}
	fs.SetAnnotation(name, settingAnnotation, []string{st.Env})
}

// applyFlags sets the settings whose flags were given on the command line
// over the configuration, so flags win over the environment and .env, and
// then validates the result. A value the setting refuses is an error
// naming the flag.
func applyFlags(cmd *cobra.Command, c *config.Config) error {
	fs := cmd.Flags()
	for _, st := range config.Settings() {
		if st.Flag == "" {
			continue
		}
		fl := fs.Lookup(st.Flag)
		if fl == nil || !fl.Changed {
			continue
		}
		v := fl.Value.String()
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		if err := st.Set(c, v); err != nil {
			return fmt.Errorf("--%s %q %s", st.Flag, v, err)
		}
	}
	return c.Validate()
}

// addDirFlags adds the folder flags of the commands that build an index.
func addDirFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	settingFlag(f, "data")
	settingFlag(f, "database")
	settingFlag(f, "index")
}

// addSearchFlags adds the flags of the commands that search.
func addSearchFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	for _, name := range []string{"index", "k", "bm25-weight", "fusion", "scope"} {
		settingFlag(f, name)
	}
}

// addAnswerFlags adds the flags of the commands that answer questions.
func addAnswerFlags(cmd *cobra.Command) {
	addSearchFlags(cmd)
	f := cmd.Flags()
	for _, name := range []string{"logs", "generator", "reader", "reader-model", "provider", "model", "evidence-threshold", "profile", "claim-coverage", "verify", "keep-unverified"} {
		settingFlag(f, name)
	}
}
