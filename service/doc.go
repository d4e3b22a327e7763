// Package service is Hindsight's application layer: the operations agents
// and operators perform (recall, store, log, end a session, feedback,
// correct, forget, undo, history, stats), implemented over Temporal, the
// episodic store and the recall engine. The MCP server and the HTTP
// endpoints are thin transports over it.
//
// Every method takes the tenant explicitly; transports derive it from the
// caller's credentials, never from a tool argument.
package service
