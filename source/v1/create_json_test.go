package v1

import "strings"

// Creates are sent as the documented form (AppendForm); the JSON body the service and serve mode
// also accept is written only by tests, to feed the readers.

// AppendJSON appends the JSON create body the service and serve mode accept: {"employee":{...}} with join_date in
// the seed's input form YYYY/MM/DD.
func (n NewEmployee) AppendJSON(b []byte) []byte {
	b = append(b, `{"employee":`...)
	w := beginObject(b)
	w.key("first_name")
	w.b = appendString(w.b, n.FirstName)
	w.key("last_name")
	w.b = appendString(w.b, n.LastName)
	w.key("email")
	w.b = appendString(w.b, n.Email)
	if n.JobTitle != "" {
		w.key("job_title")
		w.b = appendString(w.b, n.JobTitle)
	}
	w.key("join_date")
	w.b = appendString(w.b, strings.ReplaceAll(n.JoinDate, "-", "/"))
	return append(w.end(), '}')
}
