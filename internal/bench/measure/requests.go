package measure

// isRead tells whether a client-go request, by its method label, is a
// read. Reads and writes split requests by HTTP method: GET (which
// includes LIST and WATCH) reads, POST, PUT, PATCH and DELETE write.
func isRead(l map[string]string) bool { return l["method"] == "GET" }

func isWrite(l map[string]string) bool {
	switch l["method"] {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}
