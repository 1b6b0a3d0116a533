package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"

	"github.com/termlab/termlab/internal/claims"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr,omitempty"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitSkipped is a claim not checked (CI tools show it as skipped, not passed).
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit renders junit.xml: one test case per claim.
func JUnit(run Run) ([]byte, error) {
	s := run.Summary
	took := fmt.Sprintf("%.3f", s.FinishedAt.Sub(s.StartedAt).Seconds())
	suite := junitSuite{Name: run.Title, Tests: len(s.Claims), Time: took, Timestamp: s.StartedAt.UTC().Format("2006-01-02T15:04:05")}
	suite.Properties = append(suite.Properties, junitProperty{"run_id", s.RunID}, junitProperty{"namespace", s.Namespace})
	keys := make([]string, 0, len(s.Versions))
	for k := range s.Versions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		suite.Properties = append(suite.Properties, junitProperty{"version." + k, s.Versions[k]})
	}
	class := "termlab." + strings.TrimPrefix(run.Title, "lab:")
	for _, c := range s.Claims {
		obs, _ := json.MarshalIndent(c.Observed, "", "  ")
		out := c.Statement + "\n"
		for _, pc := range c.Preconditions {
			out += "precondition (arranged by termlab, not observed): " + pc.String() + "\n"
		}
		out += fmt.Sprintf("observed: %s\nevidence: %s\n", obs, strings.Join(c.Evidence, ", "))
		tc := junitCase{Name: c.ID, Classname: class, Time: "0", SystemOut: out}
		switch {
		case c.Verdict == claims.NotChecked:
			suite.Skipped++
			tc.Skipped = &junitSkipped{Message: c.Reason}
		case !c.Passed():
			suite.Failures++
			tc.Failure = &junitFailure{Message: c.Reason, Type: "ClaimFailed", Text: out}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, e := range s.Errors {
		suite.Tests++
		suite.Failures++
		suite.Cases = append(suite.Cases, junitCase{Name: "run error", Classname: class, Time: "0", Failure: &junitFailure{Message: e, Type: "RunError", Text: e}})
	}
	doc := junitSuites{Name: "termlab", Tests: suite.Tests, Failures: suite.Failures, Time: took, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
