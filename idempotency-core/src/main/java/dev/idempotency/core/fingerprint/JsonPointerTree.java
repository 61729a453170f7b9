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

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The JSON Pointers (RFC 6901) whose values are left out of a canonical JSON body,
 * compiled into a tree that the canonicaliser walks along with the document.
 * <p>
 * Each node stands for a location that is on the way to, or is, an excluded location. A
 * reference token that is a valid array index ({@code 0} or a digit string without a
 * leading zero that fits an {@code int}) matches both that array element and an object
 * member of the same name, as RFC 6901 defines; the token {@code -} names the element
 * after the last one and so never matches anything that exists.
 * <p>
 * Not changed after {@link #compile(List)} returns, so thread-safe once published safely
 * (the fingerprinter keeps it in a volatile field).
 *
 * @author Idempotency contributors
 */
final class JsonPointerTree {

	private static final int[] NO_INDEXES = {};

	private static final JsonPointerTree[] NO_NODES = {};

	private boolean excluded;

	private final Map<String, JsonPointerTree> members = new HashMap<>();

	private int[] indexes = NO_INDEXES;

	private JsonPointerTree[] elements = NO_NODES;

	private JsonPointerTree() {
	}

	/**
	 * Compile the given pointers.
	 * @param pointers the pointers
	 * @return the root of the tree, or {@code null} if there are no pointers
	 * @throws IllegalArgumentException if a pointer is {@code null}, not a valid JSON
	 * Pointer, or the empty pointer (which would exclude the whole body)
	 */
	static @Nullable JsonPointerTree compile(List<String> pointers) {
		if (pointers.isEmpty()) {
			return null;
		}
		JsonPointerTree root = new JsonPointerTree();
		for (String pointer : pointers) {
			JsonPointerTree node = root;
			for (String token : parse(pointer)) {
				node = node.child(token);
			}
			node.excluded = true;
		}
		return root;
	}

	/**
	 * Split a JSON Pointer into its unescaped reference tokens.
	 * @param pointer the pointer
	 * @return the tokens, at least one
	 * @throws IllegalArgumentException if the pointer is not valid or is empty
	 */
	static List<String> parse(@Nullable String pointer) {
		// Not Jackson's JsonPointer: Jackson is optional, and pointers are validated
		// with or without it; and JsonPointer.compile reads a '~' that is not followed by
		// '0' or '1' as a plain character ("/a~2" names the member "a~2"), where RFC 6901
		// makes the pointer invalid.
		if (pointer == null) {
			throw new IllegalArgumentException("Excluded JSON Pointers must not contain null");
		}
		if (pointer.isEmpty()) {
			throw new IllegalArgumentException("Invalid excluded JSON Pointer '': the empty pointer denotes the "
					+ "whole body; disable JSON canonicalisation or leave the body out of the fingerprint instead");
		}
		if (pointer.charAt(0) != '/') {
			throw new IllegalArgumentException(
					"Invalid excluded JSON Pointer '" + pointer + "': a JSON Pointer must start with '/' (RFC 6901)");
		}
		List<String> tokens = new ArrayList<>();
		StringBuilder token = new StringBuilder();
		for (int i = 1; i <= pointer.length(); i++) {
			char c = (i < pointer.length()) ? pointer.charAt(i) : '/';
			if (c == '/') {
				tokens.add(token.toString());
				token.setLength(0);
			}
			else if (c == '~') {
				char escaped = (i + 1 < pointer.length()) ? pointer.charAt(i + 1) : 0;
				if (escaped != '0' && escaped != '1') {
					throw new IllegalArgumentException("Invalid excluded JSON Pointer '" + pointer
							+ "': '~' must be followed by '0' or '1' (RFC 6901)");
				}
				token.append((escaped == '0') ? '~' : '/');
				i++;
			}
			else {
				token.append(c);
			}
		}
		return tokens;
	}

	private JsonPointerTree child(String token) {
		JsonPointerTree child = this.members.computeIfAbsent(token, (name) -> new JsonPointerTree());
		int index = arrayIndex(token);
		if (index >= 0 && Arrays.binarySearch(this.indexes, index) < 0) {
			// kept sorted, so that element lookups can search instead of scanning
			int at = -Arrays.binarySearch(this.indexes, index) - 1;
			int[] indexes = new int[this.indexes.length + 1];
			JsonPointerTree[] elements = new JsonPointerTree[indexes.length];
			System.arraycopy(this.indexes, 0, indexes, 0, at);
			System.arraycopy(this.elements, 0, elements, 0, at);
			indexes[at] = index;
			elements[at] = child;
			System.arraycopy(this.indexes, at, indexes, at + 1, this.indexes.length - at);
			System.arraycopy(this.elements, at, elements, at + 1, this.elements.length - at);
			this.indexes = indexes;
			this.elements = elements;
		}
		return child;
	}

	private static int arrayIndex(String token) {
		int length = token.length();
		if (length == 0 || length > 10 || (length > 1 && token.charAt(0) == '0')) {
			return -1;
		}
		long value = 0;
		for (int i = 0; i < length; i++) {
			char c = token.charAt(i);
			if (c < '0' || c > '9') {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return (value <= Integer.MAX_VALUE) ? (int) value : -1;
	}

	/**
	 * Whether the value at this location is left out.
	 * @return {@code true} to leave the value out
	 */
	boolean isExcluded() {
		return this.excluded;
	}

	/**
	 * Return the node for a member of the object at this location.
	 * @param name the member name
	 * @return the node, or {@code null} if no pointer goes through that member
	 */
	@Nullable JsonPointerTree member(String name) {
		return this.members.isEmpty() ? null : this.members.get(name);
	}

	/**
	 * Return the node for an element of the array at this location.
	 * @param index the element index
	 * @return the node, or {@code null} if no pointer goes through that element
	 */
	@Nullable JsonPointerTree element(int index) {
		if (this.indexes.length == 0) {
			return null;
		}
		int at = Arrays.binarySearch(this.indexes, index);
		return (at >= 0) ? this.elements[at] : null;
	}

}
