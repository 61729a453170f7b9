/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.core.fingerprint;

import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;

import dev.idempotency.core.RequestFingerprint;

/**
 * Reusable state of one fingerprint computation: a SHA-256 digest and the buffers the
 * framing and the canonical JSON form are written into.
 * <p>
 * Workspaces are pooled instead of kept in thread locals so that virtual threads, which
 * are created per request, reuse them too. A workspace belongs to one thread between
 * {@link #acquire()} and {@link #release(FingerprintWorkspace)}; the pool itself is
 * lock-free and bounded, and a miss simply creates a new workspace.
 * <p>
 * The pool is what keeps a fingerprint's allocation independent of the body's size. In
 * {@code FingerprintBenchmark} (docs/benchmarks/jmh.md) a canonical fingerprint allocates
 * 1,015 B for the 1 KiB document and 1,078 B for the 16 KiB one, whose buffers are
 * reused, but 770,227 B for the 256 KiB one, whose buffers are larger than
 * {@link #MAX_RETAINED_BYTES} and so are not kept; a raw fingerprint allocates 120 B at
 * every size. A digest created per call would add about 240 B
 * ({@code KeyDigestBenchmark.digest}: 360 B with a new digest per call, 120 B with a
 * reused one).
 *
 * @author Idempotency contributors
 */
final class FingerprintWorkspace {

	/**
	 * Buffers larger than this are dropped when a workspace returns to the pool, so that
	 * one unusually large request does not pin memory for the life of the application.
	 */
	static final int MAX_RETAINED_BYTES = 64 * 1024;

	private static final int POOL_SIZE = poolSize();

	private static final AtomicReferenceArray<FingerprintWorkspace> POOL = new AtomicReferenceArray<>(POOL_SIZE);

	private static final int INITIAL_MEMBERS = 16;

	final MessageDigest digest;

	/**
	 * Room for the digest, so that the copy {@link RequestFingerprint#of(byte[])} takes
	 * is the only array a fingerprint allocates.
	 */
	private final byte[] result = new byte[RequestFingerprint.LENGTH];

	/**
	 * The framing of the request parts that precede the body.
	 */
	final FingerprintBuffer frame = new FingerprintBuffer();

	/**
	 * The canonical form of a JSON body.
	 */
	final FingerprintBuffer json = new FingerprintBuffer();

	/**
	 * Copy of the body when it is handed to the JSON parser.
	 */
	byte[] body = new byte[0];

	/**
	 * Room to reorder the members of one object.
	 */
	byte[] scratch = new byte[0];

	/**
	 * Room to read a member name into.
	 */
	char[] chars = new char[64];

	/**
	 * Stack of the members of the objects being canonicalised. Its entries are created
	 * once and reused, so a member costs no allocation.
	 */
	Member[] members = new Member[INITIAL_MEMBERS];

	private FingerprintWorkspace() {
		this.digest = newDigest();
	}

	private static MessageDigest newDigest() {
		// The key digests' helper stays package-private in dev.idempotency.core rather
		// than become public API for this one call. A workspace is created only when the
		// pool has none free, so the provider look-up is not worth saving by cloning.
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by the Java platform", ex);
		}
	}

	private static int poolSize() {
		int processors = Runtime.getRuntime().availableProcessors();
		return Math.min(64, Math.max(4, processors * 2));
	}

	/**
	 * Take a workspace from the pool or create one.
	 * @return a workspace owned by the caller until released
	 */
	static FingerprintWorkspace acquire() {
		int start = (System.identityHashCode(Thread.currentThread()) & Integer.MAX_VALUE) % POOL_SIZE;
		for (int i = 0; i < POOL_SIZE; i++) {
			int slot = (start + i) % POOL_SIZE;
			if (POOL.get(slot) != null) {
				FingerprintWorkspace workspace = POOL.getAndSet(slot, null);
				if (workspace != null) {
					return workspace;
				}
			}
		}
		return new FingerprintWorkspace();
	}

	/**
	 * Return a workspace to the pool, or let it be collected if the pool is full.
	 * @param workspace the workspace, no longer used by the caller
	 */
	static void release(FingerprintWorkspace workspace) {
		workspace.clear();
		int start = (System.identityHashCode(Thread.currentThread()) & Integer.MAX_VALUE) % POOL_SIZE;
		for (int i = 0; i < POOL_SIZE; i++) {
			if (POOL.compareAndSet((start + i) % POOL_SIZE, null, workspace)) {
				return;
			}
		}
	}

	/**
	 * Complete the digest and reset it.
	 * @return the fingerprint of everything the digest was fed
	 */
	RequestFingerprint finishDigest() {
		try {
			this.digest.digest(this.result, 0, this.result.length);
		}
		catch (DigestException ex) {
			throw new IllegalStateException("A SHA-256 digest does not fit in " + this.result.length + " bytes", ex);
		}
		return RequestFingerprint.of(this.result);
	}

	/**
	 * Return an array of at least the given size for a copy of the body.
	 * @param size the body size
	 * @return the array
	 */
	byte[] body(int size) {
		if (this.body.length < size) {
			this.body = new byte[size];
		}
		return this.body;
	}

	/**
	 * Return scratch space of at least the given size.
	 * @param size the size needed
	 * @return the array
	 */
	byte[] scratch(int size) {
		if (this.scratch.length < size) {
			this.scratch = new byte[Math.max(size, Math.min(MAX_RETAINED_BYTES, this.scratch.length << 1))];
		}
		return this.scratch;
	}

	/**
	 * Return room for a name of the given length.
	 * @param size the number of characters
	 * @return the array
	 */
	char[] chars(int size) {
		if (this.chars.length < size) {
			this.chars = new char[Math.max(size, this.chars.length << 1)];
		}
		return this.chars;
	}

	/**
	 * Return the entry just above the top of the member stack, making room for it.
	 * @param top the current number of members on the stack
	 * @return the entry at index {@code top}
	 */
	Member member(int top) {
		if (top == this.members.length) {
			this.members = Arrays.copyOf(this.members, top << 1);
		}
		Member member = this.members[top];
		if (member == null) {
			member = new Member();
			this.members[top] = member;
		}
		return member;
	}

	private void clear() {
		this.digest.reset();
		this.frame.trim(MAX_RETAINED_BYTES);
		this.json.trim(MAX_RETAINED_BYTES);
		if (this.body.length > MAX_RETAINED_BYTES) {
			this.body = new byte[0];
		}
		if (this.scratch.length > MAX_RETAINED_BYTES) {
			this.scratch = new byte[0];
		}
		if (this.chars.length > MAX_RETAINED_BYTES) {
			this.chars = new char[64];
		}
		if (this.members.length > MAX_RETAINED_BYTES / 8) {
			this.members = new Member[INITIAL_MEMBERS];
		}
		else {
			for (Member member : this.members) {
				if (member != null) {
					member.clear();
				}
			}
		}
	}

	/**
	 * One member on the member stack: its name, and where its canonical bytes start and
	 * end in {@link #json} (both -1 when it is excluded).
	 */
	static final class Member {

		String name = "";

		int start;

		int end;

		void set(String name, int start, int end) {
			this.name = name;
			this.start = start;
			this.end = end;
		}

		void clear() {
			// the name is request data: drop it, so that a pooled workspace does not
			// keep it alive
			this.name = "";
		}

	}

}
