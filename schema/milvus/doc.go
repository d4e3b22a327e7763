// Package milvus is the specification of Hindsight's Milvus collections, in
// one place: a collection for semantic memories and one for episodes, their
// fields, the limits those fields impose, and the vector index.
//
// The spec is plain data with no dependency on a Milvus SDK. The adapter in
// store/milvus translates it into SDK calls and compares it with what a
// server reports, so moving to another SDK changes only the adapter.
//
// Every document carries its tenant, which is the partition key: Milvus
// hashes tenants onto a fixed set of partitions, so a tenant's search never
// scans another tenant's segments, and every expression the adapter builds
// still names the tenant. The primary key combines tenant and ID
// (PrimaryKey), because the same ID may exist in two tenants independently.
// Dynamic fields are off: a document has exactly the fields declared here.
//
// The memories collection also holds each memory's keyword vector in a
// sparse float vector field (FieldSparse) with an inverted index scored by
// inner product, for hybrid search; episodes have none. Sparse vectors
// need Milvus 2.4 or newer. Milvus cannot add a vector field to an
// existing collection, so Check refuses a memories collection created
// without it (SparseFieldError): the index generation must be rebuilt.
package milvus
